"""Adapters that put memdir behind agent frameworks' own memory interfaces.

Each adapter is a module of its own with an optional extra, imported only when used
(``from memdir.integrations.langgraph import MemdirStore``); a missing framework is
one error naming the ``pip install 'memdir[<extra>]'`` to run. Nothing is imported
here, so ``import memdir.integrations`` never needs a framework.
"""
