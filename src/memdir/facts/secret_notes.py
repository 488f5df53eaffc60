"""Credentials as people write them into notes: after a label, in a table, as a pair.

Code scanners (detect-secrets, gitleaks) find provider tokens and ``NAME=value``
lines in source files; notes hold credentials in prose, in many languages:
``the password for the NAS is Tr0ub4dor&3``, ``Das WLAN-Passwort ist ...``,
``| Router | admin | hunter2 |`` under a ``Password`` column, ``creds: admin /
...``, ``PIN 4821``, ``openweathermap key 3f9a...``. Each rule here reads a
label (a credential word of one of several languages), what joins it to the
value (``:``, ``=``, ``is``/``ist``/``est``/``es``/``é``..., ``set to``, a table
cell) and then judges the value by how strong the label is:

* a **password** word (password, Passwort, mot de passe, contraseña, senha,
  пароль, 密码 ..., passphrase, API key, client secret): any value but a
  placeholder, a reference (``os.environ[...]``) or the rest of a sentence
  (``Password: stored in the vault``, ``the passphrase is fine``);
* a **weak** word (token, key, secret, auth): only a value that looks like a
  key (long, letters with digits, or hex);
* a **code** word (PIN, door code, Geheimzahl, code d'accès, combination): only
  digits;
* a **pair** word (creds, login, Zugangsdaten, identifiants): ``user / value``.

A value joined by a bare space (``NAS pw hunter2``, ``password Tr0ub4dor&3``) or
by ``to`` (``changed the password to ...``) must look like a password (letters
with digits or symbols), which no ordinary word does.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

# -- vocabulary ------------------------------------------------------------------------
from memdir.facts.secret_words import (
    _ABOUT,
    _ACCOUNT_PAIR,
    _ASSIGNMENT,
    _AUTH_TUPLE,
    _CJK,
    _CLI,
    _CODE_WORDS,
    _CREDENTIAL_PARTS,
    _DESCRIPTION_ENDINGS,
    _DESCRIPTIONS,
    _EMAIL,
    _FLAG_PAIR,
    _HEX,
    _HOLDER_PARTS,
    _KEY_CHARS,
    _METADATA,
    _NAME_VALUE,
    _NOT_A_LOCK_CODE,
    _NOT_SECRET_KIND,
    _PAIR,
    _PASS_WORD,
    _PASSWORD_SYMBOLS,
    _PASSWORD_WORDS,
    _PLACEHOLDER,
    _PLAIN_CODE,
    _PROSE_WORDS,
    _PUBLIC,
    _REFERENCE,
    _RULES,
    _SEED,
    _STRONG_KEY_QUALIFIERS,
    _USE_AS,
    _USE_FOR,
    _USER_THEN_PASSWORD,
    _UUID,
    _VALUE_THEN_LABEL,
    _VARIABLE,
    _WEAK_WORDS,
    _XML_ELEMENT,
    Strength,
    _words,
)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1].strip()
    return value.strip("\"'`")


def is_placeholder(value: str) -> bool:
    """``<token>``, ``${DB_PASSWORD}``, ``***``, ``changeme``: a value that is not one."""
    if value.startswith(("<", "{{", "${", "$(", "[", "%", "{")) or _VARIABLE.fullmatch(value):
        return True  # <set in vault>, {{ vault_x }}, ${DB_PASSWORD}, $(op read ...), $TOKEN
    value = value.strip("\"'`.,;:!?)(")
    return len(value) < 3 or bool(_PLACEHOLDER.fullmatch(value))


def looks_like_key(value: str) -> bool:
    """A value a machine made: long, key characters only, digits among letters, or hex."""
    value = value.strip("\"'`.,;:!?)(").removeprefix("base64:")
    if _UUID.fullmatch(value):
        return True
    if len(value) < 12 or not _KEY_CHARS.fullmatch(value):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    if "/" in value.strip("/=") and not (len(value) >= 20 and mixed and digits):
        return False  # a path, not base64
    if _HEX.fullmatch(value):
        return len(value) >= 14 and letters > 0 and digits > 0
    if not letters or not digits:
        return False
    switches = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(value))
    return switches >= 3 or (len(value) >= 20 and any(c.isupper() for c in value[1:]))


def looks_like_password(value: str) -> bool:
    """Letters with digits or symbols, or inner capitals: what no ordinary word is."""
    value = value.strip("\"'`,;)(").rstrip(".")
    if not 4 <= len(value) <= 128 or "/" in value or "'" in value:
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(c in _PASSWORD_SYMBOLS for c in value[:-1])
    inner_capitals = sum(c.isupper() for c in value[1:])
    if letters == 0:
        return False
    return digits > 0 or symbols > 0 or (inner_capitals > 0 and not value.isupper())


def _is_prose(value: str, rest: str) -> bool:
    """``Password: stored in the vault``, ``the passphrase is fine.``: prose, not a value.

    An ordinary word followed by more of the sentence, or a word that ends the
    sentence but reads as a description (``fine``, ``required``, ``rotated``).
    A run of three or more plain words with no function word among them is a
    passphrase (``correct horse battery staple``), not prose.
    """
    word = value.rstrip(",.;!?").replace("'", "").replace("\u2019", "")
    if word.count("-") == 1:  # short-lived, read-only: words; a-b-c-d is a passphrase
        word = word.replace("-", "")
    if not word.isalpha():
        return False
    lowered = word.lower()
    if lowered in _PROSE_WORDS:
        return True
    if _is_passphrase(value, rest):
        return False
    ends = value[-1] in ".;!?" or not rest.strip() or rest.strip()[0] in ".;!?),"
    if not ends:
        return bool(re.match(r"\s+\w", rest))
    if re.fullmatch(r"\w{0,5}ge\w{2,}(?:t|en)", lowered):  # German participles: abgelaufen
        return True
    return lowered in _DESCRIPTIONS or lowered.endswith(_DESCRIPTION_ENDINGS)


def _is_passphrase(value: str, rest: str) -> bool:
    sentence = re.split(r"[.;!?,()]", rest, maxsplit=1)[0]
    words = [value.rstrip(",.;!?"), *sentence.split()]
    return (
        3 <= len(words) <= 30
        and all(w.isalpha() and w.islower() for w in words)
        and not any(w in _PROSE_WORDS or w in _DESCRIPTIONS for w in words)
    )


def judge(value: str, rest: str, strength: Strength, bare: bool = False) -> bool:
    """Whether ``value`` (``rest``: the line after it) is a credential given its label."""
    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`"
    inner = _unquote(value)
    if not inner or is_placeholder(inner) or (not quoted and is_placeholder(value)):
        return False
    if _CJK.search(inner):  # パスワードはチームの金庫に...: a sentence goes on
        return False
    if inner.startswith(("pk_live_", "pk_test_", "pk.eyJ")):  # publishable, public tokens
        return False
    if strength is Strength.CODE:
        inner = inner.strip(",.;:!?)(")
        return bool(re.fullmatch(r"\d{3,10}[#*]?|\d{1,3}(?:[- ]\d{1,3}){2,}", inner)) and not (
            re.match(r"\s*(?:digits|ziffern|chiffres|d[íi]gitos|cifre|characters|to|bis)\b", rest)
        )
    if strength is Strength.WEAK:  # an id or an address is no key: idempotency key <uuid>
        return looks_like_key(inner) and not _UUID.fullmatch(inner) and not inner.startswith("0x")
    if strength is Strength.PASSWORDLIKE or (bare and not quoted):
        return looks_like_password(inner)
    if _REFERENCE.fullmatch(inner) and not quoted:
        return False
    if quoted and " " in inner:
        first, _, more = inner.partition(" ")
        return not _is_prose(first, " " + more)
    return not _is_prose(value, rest)


# -- rules ---------------------------------------------------------------------------


def labelled_values(line: str) -> Iterator[tuple[str, str]]:
    """``(kind, value)`` for each credential given after a label in one line of prose."""
    for strength, pattern in _RULES:
        for match in pattern.finditer(line):
            groups = match.groupdict()
            sep = (
                groups.get("sep") or groups.get("near") or groups.get("named") or groups.get("bare")
            )
            sep = sep or ""
            bare = not sep.strip() or sep.strip() == "to" or sep.rstrip().endswith(" to")
            if groups.get("name"):
                if (_ABOUT | _METADATA).intersection(groups["name"].lower().split()):
                    continue  # Password manager: Bitwarden, API key rotation: done
                bare = True
            if _NOT_SECRET_KIND.search(line[: match.start()]):
                continue  # a public key, a cache key, a page token: not a credential
            if re.fullmatch(_PLAIN_CODE, groups["label"], re.I) and _NOT_A_LOCK_CODE.search(
                line[: match.start()]
            ):
                continue
            if judge(match["value"], match["rest"], strength, bare=bare):
                yield _KINDS[strength], _unquote(match["value"])
    for match in _PAIR.finditer(line):
        value = match["value"]
        if not is_placeholder(value) and not _is_prose(value, "") and len(_unquote(value)) >= 4:
            yield "a user name and password ('creds: user / ...')", _unquote(value)
    for pattern in (_ACCOUNT_PAIR, _USER_THEN_PASSWORD, _FLAG_PAIR, _USE_FOR, _VALUE_THEN_LABEL):
        for match in pattern.finditer(line):
            value = match["value"]
            if _EMAIL.fullmatch(value.rstrip(".,;")):
                continue  # ana@example.org / ben@example.org
            if looks_like_password(value) and not is_placeholder(value):
                yield "a user name and password ('creds: user / ...')", _unquote(match["value"])
    for match in _SEED.finditer(line):
        if not any(word in _PROSE_WORDS for word in match["value"].lower().split()):
            yield "a wallet seed phrase", match["value"]
    for match in _USE_AS.finditer(line):
        if looks_like_password(match["value"]) and not is_placeholder(match["value"]):
            yield _KINDS[Strength.PASSWORD], match["value"]
    for match in _CLI.finditer(line):
        value = next(v for v in match.groups() if v)
        if not is_placeholder(value) and not value.startswith("$"):
            yield "a password on a command line", _unquote(value)
    for match in _AUTH_TUPLE.finditer(line):
        if looks_like_password(match["value"]) and not is_placeholder(match["value"]):
            yield "a password or key assignment (name=value)", match["value"]


_KINDS = {
    Strength.PASSWORD: "a password or key given after a label ('password: ...')",
    Strength.PASSWORDLIKE: "a password or key given after a label ('password: ...')",
    Strength.WEAK: "a key or token given after a label ('API key ...')",
    Strength.CODE: "a PIN or access code",
}


def _strength_of(name: str) -> Strength | None:
    """How strongly an identifier (``DB_PASSWORD``, ``apiKey``, ``token_ttl``) names one."""
    parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]
    if not parts or parts[-1] in _METADATA or _PUBLIC.intersection(parts):
        return None
    found: Strength | None = None
    for index, part in enumerate(parts):
        strength = _CREDENTIAL_PARTS.get(part)
        if strength is None:
            continue
        if not all(p in _HOLDER_PARTS or p.isdigit() for p in parts[index + 1 :]):
            continue  # PASSWORD_HASHER, TOKEN_EXPIRY: about the credential, not it
        if strength is Strength.WEAK and index and parts[index - 1] in _STRONG_KEY_QUALIFIERS:
            strength = Strength.PASSWORD
        if found is None or strength is Strength.PASSWORD:
            found = strength
    return found


def assigned_values(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, value)`` for credentials assigned to a name in code, config, JSON, YAML or
    XML (``<password>x</password>``)."""
    for pattern in (_ASSIGNMENT, _NAME_VALUE, _XML_ELEMENT):
        for match in pattern.finditer(text):
            strength = _strength_of(match["name"])
            if strength is None or _NOT_SECRET_KIND.search(
                text, max(0, match.start() - 30), match.start()
            ):
                continue
            value = match["value"]
            inner = _unquote(value)
            quoted = inner != value
            if not inner or is_placeholder(inner) or (not quoted and _REFERENCE.fullmatch(inner)):
                continue
            if strength is Strength.PASSWORD or (strength is Strength.CODE and inner.isdigit()):
                ok = quoted or not _is_prose(inner, text[match.end() : match.end() + 80])
            else:
                ok = looks_like_key(inner)
            if ok:
                yield "a password or key assignment (name=value)", inner


# -- tables --------------------------------------------------------------------------

_CELL_LABELS: tuple[tuple[Strength, re.Pattern[str]], ...] = tuple(
    (strength, re.compile(rf"(?i)(?:[\w'\u2019.+-]+\s+){{0,3}}(?:{words})(?:\s*\([^)]*\))?"))
    for strength, words in (
        (Strength.CODE, _CODE_WORDS),
        (Strength.PASSWORD, _PASSWORD_WORDS),
        (Strength.PASSWORDLIKE, _PASS_WORD),
        (Strength.WEAK, _WEAK_WORDS),
    )
)
_SEPARATOR_ROW = re.compile(r"\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*")


def _cells(line: str) -> list[str]:
    return [cell.strip().strip("*_`").strip() for cell in line.strip().strip("|").split("|")]


def _cell_strength(cell: str) -> Strength | None:
    for strength, pattern in _CELL_LABELS:
        if pattern.fullmatch(cell):
            return strength
    return None


def table_values(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, value)`` for credentials in Markdown tables: under a ``Password`` (``PIN``,
    ``Token`` ...) column, or in the cell after a label cell (``| wifi password | x |``)."""
    lines = text.split("\n")
    columns: dict[int, Strength] = {}
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith("|"):
            columns = {}
            continue
        if _SEPARATOR_ROW.fullmatch(stripped):
            continue
        cells = _cells(stripped)
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if _SEPARATOR_ROW.fullmatch(following.strip()) and "-" in following:
            columns = {}
            for number, cell in enumerate(cells):
                strength = _cell_strength(cell)
                if strength is not None:
                    columns[number] = strength
            continue
        for number, cell in enumerate(cells):
            strength = columns.get(number)
            if strength is not None and _judge_cell(cell, strength):
                yield "a password or key in a table", _unquote(cell)
        for number, cell in enumerate(cells[:-1]):
            strength = _cell_strength(cell)
            if strength is not None and _judge_cell(cells[number + 1], strength):
                yield "a password or key in a table", _unquote(cells[number + 1])


def _judge_cell(cell: str, strength: Strength) -> bool:
    """A cell is judged as a value followed by the rest of its words (``8 chars``: prose)."""
    if len(cell) >= 2 and cell[0] == cell[-1] and cell[0] in "\"'`":
        return judge(cell, "", strength)
    first, _, rest = cell.partition(" ")
    return judge(first, f" {rest}" if rest else "", strength)


# Literal stems, one of which every label, command and account the rules here read
# contains (lower case). Lines are chosen with str.find over the whole text, which is
# ten times faster than one regular expression of the vocabulary; tests/facts checks
# that every credential of the corpus is in a chosen line.
_STEMS = (
    *_words(
        """
        pass pwd pw psw pword p/w kennwort mdp contrase contrasi senha wachtw wagwoord hasło
        haslo senord adgangs kodeord lykilor salas parool heslo geslo lozinka ifra slapta
        parol ifre jelsz fjal pasahitza cyfrinair pasfhocal nenosiri khẩu khau kata парол
        лозинка κωδικ 密码 密碼 口令 パスワード パスコード 비밀번호 암호 รหัสผ่าน पासवर्ड كلمة סיסמ رمز
        პაროლ գաղտնաբառ clave key api secret seed mnemonic recovery code schl clé cle: cle=
        chiave token auth pin puk cvv cvc combo ombina geheimz digo codice kod 暗証番号 cred
        login zugang identifi inlog logow user wi-fi wifi wlan ssid mysql sshpass redis-cli
        sqlplus use htpasswd sudo openssl zip 7z rar -u -a -k -p u: u= p: p= admin root ubuntu
        postgres guest deploy ops svc service backup ftp test operator @ log_in signin sign_in
        """
    ),
    *("cle ", "sa /", "sa/", "pi /", "pi/"),
)


def candidate_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` in which a label, a command or an account the rules read occurs."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: line by line
        yield from (line for line in text.split("\n") if _mentions_stem(line.lower()))
        return
    starts: set[int] = set()
    for stem in _STEMS:
        at = lowered.find(stem)
        while at != -1:
            start = lowered.rfind("\n", 0, at) + 1
            starts.add(start)
            end = lowered.find("\n", at)
            at = -1 if end == -1 else lowered.find(stem, end)
    for start in sorted(starts):
        end = text.find("\n", start)
        yield text[start : len(text) if end == -1 else end]


def _mentions_stem(lowered_line: str) -> bool:
    return any(stem in lowered_line for stem in _STEMS)
