"""Does saving a new statement supersede the right fact, and only that one?

Each pair is an older fact, a newer statement, and what the save should do: ``supersede``
(the world changed: a new value for the same thing, in the many ways people say so),
``add`` (related but another thing: another subject, another attribute, one more value of
a many-valued relation) or ``none`` (the same fact again). The pairs were written for this
benchmark, in plain English of the kind agents save; they are not LoCoMo's. The first set
was written before the decider's rules were changed and looked at while changing them; the
``HELD_OUT_*`` set was written after, and run once.

:func:`run_updates` saves each pair into a fresh memory through ``Memory.save`` (the real
path: candidates, then the decider) and counts what happened. Precision is the share of
supersessions that hit the right fact; false supersessions of facts that were still true
are the costly error (a current fact disappears from recall), so they are counted apart.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Expected = Literal["supersede", "add", "none"]
Progress = Callable[[int, int], None]

SUPERSEDE: list[tuple[str, str]] = [
    ("The release train ships every second Tuesday", "The release train now ships every Thursday"),
    ("The standup is at 9:30", "The standup moved to 10:00"),
    ("Our main database is MySQL 5.7", "We switched the main database to PostgreSQL 16"),
    ("Alice leads the billing team", "Bob took over the billing team from Alice"),
    (
        "The API rate limit is 100 requests per minute",
        "The API rate limit was raised to 500 requests per minute",
    ),
    ("I live in Berlin", "I moved to Lisbon"),
    ("My manager is Carla", "My manager is now Dmitri"),
    ("The deploy window is Friday afternoon", "The deploy window changed to Thursday morning"),
    ("We use Jenkins for CI", "We no longer use Jenkins for CI; it runs on GitHub Actions"),
    ("The team meets in room 4B", "The team meets in room 2A instead of room 4B"),
    ("Staging runs on staging-db-2", "Staging now runs on staging-db-3"),
    ("The backup job runs at 02:00 UTC", "The backup job runs at 03:30 UTC"),
    ("My favourite editor is Vim", "My favourite editor is now Helix"),
    ("The on-call rotation is weekly", "The on-call rotation changed to every two weeks"),
    ("Invoices are sent on the 1st of the month", "Invoices are now sent on the 5th of the month"),
    ("The project deadline is March 14", "The project deadline moved to April 2"),
    ("Sam works at Acme", "Sam now works at Globex"),
    ("The office wifi network is acme-guest", "The office wifi network changed to acme-visitors"),
    ("The frontend is built with Webpack", "The frontend switched from Webpack to Vite"),
    ("The cat's vet is Dr. Lee", "The cat's vet is now Dr. Patel"),
    (
        "The monthly budget for cloud costs is $2,000",
        "The monthly budget for cloud costs was raised to $3,500",
    ),
    ("Our support hours are 9 to 5", "Our support hours are now 8 to 6"),
    ("Production runs Python 3.10", "Production runs Python 3.12 now"),
    ("Logs are kept for 30 days", "Logs are now kept for 90 days"),
    ("Maria owns the onboarding docs", "Jonas took over the onboarding docs from Maria"),
    ("The default branch is master", "The default branch was renamed to main"),
    ("The team lunch is on Wednesdays", "The team lunch moved to Thursdays"),
    ("I drink black coffee every morning", "I no longer drink coffee; I switched to green tea"),
    ("The VPN endpoint is vpn1.example.com", "The VPN endpoint changed to vpn2.example.com"),
    ("Code reviews need one approval", "Code reviews now need two approvals"),
    ("The sprint length is two weeks", "The sprint length changed to three weeks"),
    ("The demo is scheduled for Tuesday", "The demo was moved to Wednesday"),
    ("Our cloud provider is AWS", "We moved from AWS to Google Cloud as our cloud provider"),
    ("The newsletter goes out every Friday", "The newsletter now goes out every Monday"),
    ("Priya is the product owner", "The product owner is now Marco"),
    ("The test suite takes 20 minutes", "The test suite now takes 8 minutes"),
    ("The staging URL is staging.example.com", "The staging URL changed to stage.example.com"),
    ("We store sessions in Redis", "We store sessions in Memcached instead of Redis"),
    ("The holiday party is in December", "The holiday party moved to January"),
    ("My gym is FitLife", "I switched gyms from FitLife to IronWorks"),
    ("The build server has 8 GB of RAM", "The build server was upgraded to 32 GB of RAM"),
    ("Tom is on the platform team", "Tom is no longer on the platform team"),
]

ADD: list[tuple[str, str]] = [
    ("The release train ships every second Tuesday", "The release notes are written by Dana"),
    ("The standup is at 9:30", "The retrospective is at 15:00"),
    ("Alice leads the billing team", "Alice likes hiking on weekends"),
    ("The API rate limit is 100 requests per minute", "The API timeout is 30 seconds"),
    ("I live in Berlin", "I was born in Porto"),
    ("My manager is Carla", "My mentor is Carla"),
    ("We use Jenkins for CI", "We use Sentry for error tracking"),
    ("The team meets in room 4B", "The board meets in room 4B"),
    ("Staging runs on staging-db-2", "Production runs on prod-db-1"),
    ("The backup job runs at 02:00 UTC", "The cleanup job runs at 02:00 UTC"),
    ("My favourite editor is Vim", "My favourite language is Rust"),
    ("Sam works at Acme", "Sam's sister works at Globex"),
    ("The frontend is built with Webpack", "The backend is built with Go"),
    ("The staging server runs Postgres 15", "The production server runs Postgres 15"),
    ("The team uses Slack for chat", "The team uses Jira for tickets"),
    ("I like tea", "I like biscuits with my tea"),
    ("Logs are kept for 30 days", "Metrics are kept for 13 months"),
    ("Maria owns the onboarding docs", "Maria reviewed the security docs"),
    ("The default branch is main", "The default merge strategy is squash"),
    ("The demo is scheduled for Tuesday", "The dentist appointment is scheduled for Tuesday"),
    ("Our cloud provider is AWS", "Our DNS provider is Cloudflare"),
    ("Priya is the product owner", "Priya is on vacation next week"),
    ("The test suite takes 20 minutes", "The release build takes 5 minutes"),
    ("Ana's phone number ends in 4411", "Ana's email is ana@example.com"),
    ("We store sessions in Redis", "We store uploads in S3"),
    ("The holiday party is in December", "The company offsite is in June"),
    ("My gym is FitLife", "My gym buddy is Tom"),
    ("The newsletter goes out every Friday", "The invoices go out every Friday"),
    ("The VPN endpoint is vpn1.example.com", "The mail server is mail.example.com"),
    ("Code reviews need one approval", "Hotfixes need a post-mortem"),
    ("The sprint length is two weeks", "The sprint goal is to ship search"),
    ("Alice's birthday is May 3", "Bob's birthday is June 5"),
    ("The meeting is on Monday", "The party is on Monday"),
    ("I have a cat named Miso", "I have a dog named Rex"),
    ("The billing service is written in Python", "The billing service uses PostgreSQL"),
    ("We deploy with Terraform", "We monitor with Grafana"),
    ("The office is in Lisbon", "The office has a rooftop terrace"),
    ("The project deadline is March 14", "The project budget is 50,000 euros"),
    ("Carla speaks Portuguese", "Carla speaks Spanish too"),
    ("The cache TTL is 5 minutes", "The session TTL is 30 minutes"),
    ("My daughter plays violin", "My son plays football"),
    ("The wiki lives on Confluence", "The runbooks live on GitHub"),
]

HELD_OUT_SUPERSEDE: list[tuple[str, str]] = [
    ("The weekly sync is on Mondays at 11", "The weekly sync is now on Tuesdays at 11"),
    ("Our search cluster has three nodes", "Our search cluster was scaled to five nodes"),
    ("Lena is the release manager", "Omar took over as release manager from Lena"),
    ("The docs site is built with Sphinx", "The docs site switched from Sphinx to MkDocs"),
    ("The parking garage closes at 22:00", "The parking garage closes at 23:30"),
    ("Our office address is 12 Harbour Street", "Our office moved to 40 Mill Road"),
    ("My laptop runs Ubuntu 22.04", "My laptop runs Ubuntu 24.04 now"),
    ("The free plan allows 3 projects", "The free plan now allows 5 projects"),
    ("The data team reports to Ines", "The data team no longer reports to Ines"),
    (
        "Nightly exports are written to bucket raw-2024",
        "Nightly exports go to bucket raw-2025 instead",
    ),
    ("The support email is help@acme.io", "The support email changed to support@acme.io"),
    ("Quarterly planning happens in March", "Quarterly planning moved to February"),
    ("The mobile app targets iOS 16", "The mobile app now targets iOS 17"),
    ("Kai prefers tabs", "Kai switched to spaces"),
    (
        "The retention period for backups is 7 days",
        "The retention period for backups was raised to 35 days",
    ),
    ("Deploys are approved by Rita", "Deploys are now approved by Sven"),
    ("Our CDN is Fastly", "We replaced Fastly with Cloudflare as our CDN"),
    ("The intern starts on June 3", "The intern starts on June 10"),
    ("The team channel is #backend", "The team channel was renamed to #platform"),
    ("We pay for 20 seats", "We now pay for 35 seats"),
]

HELD_OUT_ADD: list[tuple[str, str]] = [
    ("The weekly sync is on Mondays at 11", "The design review is on Mondays at 14"),
    ("Our search cluster has three nodes", "Our cache cluster has two nodes"),
    ("Lena is the release manager", "Lena is learning Japanese"),
    ("The docs site is built with Sphinx", "The marketing site is built with Astro"),
    ("The parking garage closes at 22:00", "The cafeteria closes at 15:00"),
    ("Our office address is 12 Harbour Street", "Our warehouse is on the ring road"),
    ("My laptop runs Ubuntu 22.04", "My desktop runs Windows 11"),
    ("The free plan allows 3 projects", "The pro plan allows 50 projects"),
    ("The data team reports to Ines", "The data team sits on the third floor"),
    ("Kai prefers tabs", "Kai prefers dark mode"),
    ("Deploys are approved by Rita", "Expenses are approved by Rita"),
    ("Our CDN is Fastly", "Our email provider is Postmark"),
    ("The intern starts on June 3", "The intern's mentor is Paula"),
    ("The team channel is #backend", "The team also has a #random channel"),
    ("We pay for 20 seats", "We pay annually by invoice"),
    ("Mia plays the piano", "Mia also plays the guitar"),
    ("The API returns JSON", "The API also returns CSV on request"),
    ("The staging bucket is eu-staging", "The production bucket is eu-prod"),
    ("Rui works on the mobile app", "Rui works on the billing service as well"),
    ("We use Postgres for billing", "We use Postgres for analytics too"),
]

SAME: list[tuple[str, str]] = [
    ("The standup is at 9:30", "The standup is at 9:30."),
    ("Our main database is PostgreSQL 16", "our main database is PostgreSQL 16"),
    ("Alice leads the billing team", "Alice leads the billing team."),
    ("I live in Lisbon", "I live in Lisbon!"),
    ("The sprint length is two weeks", "The sprint length is two weeks"),
    ("We use Jenkins for CI", "We use Jenkins for CI."),
]


@dataclass(frozen=True)
class Outcome:
    old: str
    new: str
    expected: Expected
    action: str  # what the save did: add, update, supersede or none
    hit_old: bool  # the superseded (or repeated) fact is the old one


def pairs(held_out: bool = False) -> list[tuple[str, str, Expected]]:
    """Every pair with what a save should do; ``held_out``: the pairs written after the
    rules were (``HELD_OUT_*``), the honest estimate for statements nobody tuned on."""
    out: list[tuple[str, str, Expected]] = []
    if held_out:
        out += [(old, new, "supersede") for old, new in HELD_OUT_SUPERSEDE]
        out += [(old, new, "add") for old, new in HELD_OUT_ADD]
        return out
    out += [(old, new, "supersede") for old, new in SUPERSEDE]
    out += [(old, new, "add") for old, new in ADD]
    out += [(old, new, "none") for old, new in SAME]
    return out


def save_pair(old: str, new: str, expected: Expected, embedder: Any) -> Outcome:
    """Save ``old``, then ``new``, in a fresh memory; what did the second save do?"""
    from memdir.memory import Memory

    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory.open(Path(tmp), embedder=embedder, chat_model=None) as memory,
    ):
        first = memory.save(old, category="fact")
        second = memory.save(new, category="fact")
    assert first.fact is not None
    target = second.superseded or (second.fact if second.action == "none" else None)
    hit = target is not None and target.id == first.fact.id
    return Outcome(old, new, expected, second.action, hit)


def summarise_updates(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Recall of updates, precision of supersessions, and the errors by kind."""
    replaced = [o for o in outcomes if o.action in ("supersede", "update")]
    right = [o for o in replaced if o.expected == "supersede" and o.hit_old]
    updates = [o for o in outcomes if o.expected == "supersede"]
    false = [o for o in replaced if o.expected != "supersede"]
    missed = [o for o in updates if not (o.action in ("supersede", "update") and o.hit_old)]
    repeats = [o for o in outcomes if o.expected == "none"]
    return {
        "pairs": len(outcomes),
        "update_recall": round(len(right) / len(updates), 3) if updates else 0.0,
        "supersede_precision": round(len(right) / len(replaced), 3) if replaced else 1.0,
        "false_supersessions": len(false),
        "repeats_recognised": sum(o.action == "none" and o.hit_old for o in repeats),
        "repeats": len(repeats),
        "missed": [f"{o.old} -> {o.new}" for o in missed],
        "false": [f"{o.old} -> {o.new}" for o in false],
    }


def run_updates(
    embedder: Any, progress: Progress | None = None, held_out: bool = False
) -> dict[str, Any]:
    """Save every pair with ``embedder`` (None: keyword-only) and summarise."""
    chosen = pairs(held_out)
    outcomes = []
    for done, (old, new, expected) in enumerate(chosen, start=1):
        outcomes.append(save_pair(old, new, expected, embedder))
        if progress is not None:
            progress(done, len(chosen))
    return summarise_updates(outcomes)
