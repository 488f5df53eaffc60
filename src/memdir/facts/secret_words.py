"""The vocabulary of the credential check of notes (``secret_notes``): the words that label a
credential in several languages, what joins a label to its value, and the patterns built
from them; the judging lives in ``secret_notes``."""

from __future__ import annotations

import re
from enum import Enum


def _words(text: str) -> list[str]:
    """The words of a vocabulary written as prose lines (easier to read than a list)."""
    return text.split()


class Strength(Enum):
    """How much a label says about the value after it."""

    PASSWORD = "password"  # any value but placeholders, references and prose
    WEAK = "weak"  # only key-like values
    CODE = "code"  # only digits
    PASSWORDLIKE = "passwordlike"  # only password-like values (pass)


_PASSWORD_WORDS = (
    r"passwords?(?=\W|$)|passwd|pass ?phrase|passcode|pwd|pw|psw|pword|p/w|requirepass|"
    r"masterauth|auth_?pass|"
    r"[\w-]*(?:passwort|kennwort)|mot de passe|mdp|contrase[ñn]a|contrasenya|contrasinal|senha|"
    r"palavra-passe|wachtwoord|wagwoord|has[łl]o|l[öo]senord(?:et)?|adgangskoden?|kodeord(?:et)?|"
    r"passord(?:et)?|lykilor[ðd]|salasana|parool|salas[õo]na|heslo|geslo|lozinka|[šs]ifra|"
    r"slapta[žz]odis|parol[ăae]|[şs]ifre|jelsz[óo]|fjal[ëe]kalim|pasahitza|cyfrinair|pasfhocal|"
    r"nenosiri|m[ậa]t kh[ẩa]u|kata (?:sandi|laluan)|пароль|парола|лозинка|κωδικός(?: πρόσβασης)?|"
    r"密码|密碼|口令|パスワード|비밀번호|암호|รหัสผ่าน|पासवर्ड|كلمة (?:المرور|السر)|סיסמה|סיסמא|"
    r"رمز عبور|პაროლი|գաղտնաբառ|"
    r"clave|api[ _-]?keys?|apikey|api[ _-]?secret|secret[ _-]?(?:access[ _-]?)?key|"
    r"access[ _-]?key|private[ _-]?key|client[ _-]?secret|app[ _-]?secret|"
    r"master[ _-]?(?:password|key)|seed[ _-]?phrase|seed words|recovery[ _-]?(?:key|phrase|codes?)|"
    r"backup[ _-]?codes|licen[cs]e[ _-]?key|product[ _-]?key|wi-?fi[ _-]?key|wpa[ _-]?key|"
    r"wlan-?schl[üu]ssel|cl[ée] api|"
    r"(?:auth|access|api|refresh|bearer|bot|session|personal[ _-]access|id|server|app|"
    r"integration|write|service)[ _-]?token"
)
_WEAK_WORDS = r"token|key|secret|auth|cl[ée]|schl[üu]ssel|chiave"
_CODE_WORDS = (
    r"pin|pin-?code|puk|passcode|cvv2?|cvc|combo|パスコード|(?:door|alarm|gate|garage|keypad|safe|lock|locker|access|entry|"
    r"security|unlock|intercom|building|front door|lockbox|key ?box|key ?safe|padlock|tresor|"
    r"schloss|zahlen|alarm|t[üu]r|tor|"
    r"bike lock|mailbox|door opener|garage door|atm|card)[ -]?code|t[üu]rcode|torcode|zugangscode|"
    r"alarmcode|geheimzahl|code (?:pin|d'acc[èe]s|de la porte|du portail|de l'alarme|"
    r"d'entr[ée]e)|c[óo]digo (?:de acceso|de la puerta|pin|de acesso)|codice (?:di accesso|pin)|"
    r"combination|kombination|combinaison|combinaci[óo]n|combinazione|combina[çc][ãa]o|暗証番号"
)
_PASS_WORD = r"pass"
_PAIR_WORDS = (
    r"creds?|credentials?|login(?: details| info)?|logins?|zugangsdaten|identifiants|"
    r"credenciales|credenciais|credenziali|inloggegevens|dane logowania|"
    r"user ?/ ?pass(?:word)?|username ?/ ?password|(?:s?ftp|ssh|vpn) login|wi-?fi|wlan|ssid|"
    r"basic[ -]auth|http auth"
)
# Words that may follow a label before its separator: "password *for the NAS* is ...".
_PREPOSITIONS = (
    r"for|of|to|on|at|f[üu]r|f[üu]rs|vom|von|der|des|zum|zur|du|de la|de l'|de|del|della|dello|"
    r"do|da|dos|das|van|voor|від|от|для|till|f[öo]r|til|bei|beim|am|im|an|auf|chez|en|na|w|k|"
    r"pro|za|od|dla|pentru|untuk|cho|için|για|kohta|ke"  # noqa: RUF001 (Greek)
)
_ELIDED = r"dell|dall|nell|sull|all|d|l|de l"  # Italian and French: dell'email, d'accès
_QUALIFIER = (
    rf"(?:(?:\s+(?:{_PREPOSITIONS})\s+|\s+(?:{_ELIDED})['\u2019])[^\n:=|]{{1,40}}?"
    r"|\s*\([^()\n]{1,40}\))"  # password (Lakeside): x
)
_IS = (
    r"is now|is still|ist jetzt|est maintenant|es ahora|é agora|"
    r"c['\u2019]est|is|was|are|ist|lautet|war|est|[ée]tait|es|era|è|é|jest|[äa]r|je|это|"
    r"este|ir|є|е|είναι|adalah|ialah|là|olan"  # noqa: RUF001 (Ukrainian, Bulgarian)
)
_SET_TO = r"(?:(?:was|is|has been|got|been)\s+)?(?:set|changed|reset|updated|switched)\s+to"
_JOINED = (
    # password: x, **Password:** x, pw -> x
    r"\s*\**\s*(?:[:=\uff1a]|->|=>|\u2192|\u2013|-(?=\s))\s*\**\s*"
    rf"|\s+{_SET_TO}\s+"  # password changed to x
    rf"|\s+(?:{_IS})\s*:?\s+"  # password is x
    r"|\s*(?:是|为|は|는)\s*"  # 密码是 x, パスワードは x
)
# A qualifier needs a real separator after it ("password for the NAS is x"); a bare space
# or "to" (only a password-like value) comes right after the label ("NAS pw x").
# A name after the label ("Wachtwoord wifi: x", "mot de passe Netflix est x"): only a
# password-like value, so that "Password manager: Bitwarden" stays prose.
_NAME = r"\s+(?P<name>[\w.+-]{2,30}(?:\s+[\w.+-]{2,30})?)"
_NAME_JOINED = rf"\s*\**\s*[:=\uff1a]\s*\**\s*|\s+(?:{_IS})\s*:?\s+"
_SEPARATOR = (
    rf"(?:{_QUALIFIER}(?P<sep>{_JOINED})|(?P<near>{_JOINED})|{_NAME}(?P<named>{_NAME_JOINED})"
    r"|(?P<bare>\s+to\s+|\s+))"
)
_VALUE = r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|\S+)(?P<rest>[^\n]*)"


# Word boundaries for alphabetic scripts only: 密码是 and Wi-Fiのパスワードは have none.
_LETTER = r"[0-9A-Za-z_\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff]"
_START = rf"(?<!{_LETTER})(?<![/.-])"
_END = rf"(?!{_LETTER})(?!-)"


_COMPOUND = r"(?:[^\W\d_]+-)?"  # Kinder-PIN, SIM-PIN, WLAN-Passwort
_PLAIN_CODE = r"code|c[óo]digo|codice|kod"
# Codes that open nothing: the zip code of the office is 10115, error code 4012.
_NOT_A_LOCK_CODE = re.compile(
    r"(?i)\b(?:zip|postal|post|area|error|status|country|promo|discount|booking|tracking|qr|"
    r"bar|source|exit|return|verification|confirmation|reference|dial|iso|language|currency|"
    r"airport|product|colou?r|hex|html|morse|dress|fehler|postleit|c[óo]digo postal)\s*$"
)


def _label_rule(words: str, separator: str = _SEPARATOR) -> re.Pattern[str]:
    return re.compile(rf"(?i){_START}(?P<label>{_COMPOUND}(?:{words})){_END}{separator}{_VALUE}")


# "on" (Finnish, Estonian) and "er" (Danish, Norwegian) say "is" only after their own words.
_NORDIC = r"salasana|salas[õo]na|parool|adgangskoden?|kodeord(?:et)?|passord(?:et)?"
_NORDIC_IS = r"\s+(?:on|er)\s+(?P<sep>)"

_RULES: tuple[tuple[Strength, re.Pattern[str]], ...] = (
    (Strength.PASSWORD, _label_rule(_NORDIC, _NORDIC_IS)),
    (Strength.CODE, _label_rule(_CODE_WORDS)),
    # a plain "code" only with what it opens: "Code de la carte : 1234", not "code 4012"
    (Strength.CODE, _label_rule(_PLAIN_CODE, rf"{_QUALIFIER}(?P<sep>{_JOINED})")),
    (Strength.PASSWORD, _label_rule(_PASSWORD_WORDS)),
    (Strength.PASSWORDLIKE, _label_rule(_PASS_WORD)),
    (Strength.WEAK, _label_rule(_WEAK_WORDS)),
)
_PAIR_JOINED = r"\s*[:=]\s*|\s+(?:is|are|sind|sont|son|s[ãa]o)\s+"
_USER_AND_VALUE = r"[\"']?(?P<user>[^\s/:,\"']{2,64})[\"']?\s*(?:/|:|,)\s*(?P<value>[^\s/]+)(?!\S)"
_PAIR = re.compile(
    rf"(?i){_START}(?P<label>{_PAIR_WORDS}){_END}"
    rf"(?:{_QUALIFIER}(?:{_PAIR_JOINED})|{_PAIR_JOINED}|\s+){_USER_AND_VALUE}"
)
# "Router: admin / hunter2", "SFTP: deploy / x": an account everyone knows, then a password.
_ACCOUNT_PAIR = re.compile(
    r"(?i)(?:^|[\s(*-]|:\s*)[\"']?(?P<user>admin|administrator|root|sa|pi|ubuntu|postgres|"
    r"guest|deploy|ops|svc[\w-]*|service|backup|ftp|sftp|user|test|operator|[\w.+-]+@[\w-]+"
    r"(?:\.[\w-]+)+)[\"']?\s*(?:/|\s/\s)\s*(?P<value>[^\s/]+)(?!\S)"
)
# "u: admin p: hunter2", "user admin, pass hunter2"
_USER_THEN_PASSWORD = re.compile(
    r"(?i)\bu(?:ser(?:name)?)?\s*[:=]?\s+\S+[\s,;]+p(?:ass(?:word)?|w|wd)?\s*[:=]\s*(?P<value>\S+)"
)
_USE_AS = re.compile(
    r"(?i)\buse\s+[\"'`]?(?P<value>\S+?)[\"'`]?\s+as\s+(?:(?:the|my|our|your|a|an)\s+)?"
    r"(?:[\w-]+\s+){0,2}(?:password|passphrase|pin)\b"
)
# "it's x - the password for the router": the value first, the label after.
_VALUE_THEN_LABEL = re.compile(
    r"(?i)\b(?:it['\u2019]?s|it is|that['\u2019]?s|that is|this is)\s+[\"'`]?(?P<value>\S+?)[\"'`]?"
    r"\s*[-\u2013\u2014,:]\s*(?:the|my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}"
    r"(?:password|passphrase|pin|pw)\b"
)
# CLI forms: mysql -pSECRET, sshpass -p x, docker login -p x, curl -u user:x.
_CLI = re.compile(
    r"(?i)(?:\bmysql(?:dump|admin)?\b[^\n]*?\s-p(?P<mysql>[^\s-]\S*)"
    r"|\bsshpass\s+-p\s*(?P<sshpass>\S+)"
    r"|\bredis-cli\b[^\n]*?\s-a\s+(?P<redis>\S+)"
    r"|\bsqlplus\s+[\w$#]+/(?P<sqlplus>[^@\s]+)@"
    r"|\bnet\s+use\b[^\n]*?/user:\S+\s+(?P<netuse>[^\s/]\S*)"
    r"|\bhtpasswd\s+-\w*b\w*\s+\S+\s+\S+\s+(?P<htpasswd>\S+)"
    r"|\becho\s+[\"']?(?P<sudo>[^\"'\s|]+)[\"']?\s*\|\s*sudo\s+-\w*S"
    r"|\bopenssl\b[^\n]*?\s(?:-k\s+|-pass\s+pass:)(?P<openssl>\S+)"
    r"|\b(?:zip|unzip)\b[^\n]*?\s-P\s+(?P<zip>\S+)"
    r"|\b(?:7z|7za|rar|unrar)\b[^\n]*?\s-p(?P<sevenz>[^\s-]\S*)"
    r"|\b(?:docker|podman|helm|oras|skopeo|buildah)\s+(?:registry\s+)?login\b[^\n]*?\s-p\s+"
    r"(?P<docker>\S+))"
)
# user:password or user%password after a user flag: curl -u, httpie -a, smbclient -U ...
_FLAG_PAIR = re.compile(
    r"(?:^|\s)(?:-u|--user|-a|--auth|-U|--username)\s+[\"']?[^\s:%,\"'/]+[:%,]"
    r"(?P<value>[^\s\"']+)"
)
_AUTH_TUPLE = re.compile(
    r"(?i)(?:\bauth\s*=\s*\(?|\b\w*(?:auth|login|log_in|signin|sign_in|authenticate)\w*\()"
    r"\s*[\"'][^\"'\n]+[\"']\s*,\s*[\"'](?P<value>[^\"'\n]+)[\"']"
)
# "We use x for the guest account": a value before the label.
_USE_FOR = re.compile(
    r"(?i)\buse[sd]?\s+[\"'`]?(?P<value>\S+?)[\"'`]?\s+for\s+(?:the\s+|our\s+|my\s+)?"
    r"(?:[\w-]+\s+){0,3}(?:account|login|wi-?fi|network|vpn|router|user)\b"
)
# A wallet's seed: twelve or more plain words after "seed" or "mnemonic".
_SEED = re.compile(
    r"(?i)\b(?:seed|mnemonic)(?:\s+(?:phrase|words))?\s*(?:[:=]|is)\s*(?P<value>[a-z]+(?:\s+[a-z]+){11,23})\b"
)
_XML_ELEMENT = re.compile(
    r"<(?P<name>[A-Za-z_][\w.:-]{0,60})>(?P<value>[^<>\n]{1,200})</(?P=name)>"
)
# An identifier that names a credential, assigned a value: DB_PASSWORD=x, "api_key": "x",
# password: x (YAML), const apiKey = "x", $password = "x", connect(password="x").
_ASSIGNMENT = re.compile(
    r"(?<![\w$-])[$@]?(?P<quote>[\"']?)(?P<name>[A-Za-z_][\w.-]{0,80})(?P=quote)\s*"
    r"(?::=|=>|=(?!=)|:(?![:/]))\s*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s\"'`;,)}\]]+)"
)
# A Kubernetes-style env entry: name: DB_PASSWORD / value: x (YAML or JSON).
_NAME_VALUE = re.compile(
    r"(?i)[\"']?name[\"']?\s*:\s*[\"']?(?P<name>[A-Za-z_][\w.-]*)[\"']?\s*,?\s*\n?\s*-?\s*"
    r"[\"']?value[\"']?\s*:\s*(?P<value>\"[^\"\n]*\"|'[^'\n]*'|\S+)"
)
_CREDENTIAL_PARTS = {
    "password": Strength.PASSWORD,
    "passwd": Strength.PASSWORD,
    "passphrase": Strength.PASSWORD,
    "passcode": Strength.PASSWORD,
    "pwd": Strength.PASSWORD,
    "pw": Strength.PASSWORD,
    "pass": Strength.PASSWORD,
    "secret": Strength.PASSWORD,
    "credential": Strength.PASSWORD,
    "credentials": Strength.PASSWORD,
    "creds": Strength.PASSWORD,
    "token": Strength.WEAK,
    "key": Strength.WEAK,
    "apikey": Strength.PASSWORD,
    "auth": Strength.WEAK,
    "pin": Strength.CODE,
}
_STRONG_KEY_QUALIFIERS = frozenset(
    _words(
        "api secret access private client app master encryption signing license auth webhook "
        "refresh bearer bot session personal github gitlab slack vault"
    )
)
_PUBLIC = frozenset(_words("public pub publishable"))
# Parts that may follow the credential word in a name that still holds it: SECRET_KEY_BASE,
# DB_PASSWORD_PROD, API_KEY_2.
_HOLDER_PARTS = frozenset(
    _words(
        "value base prod production dev development staging stage test live main primary "
        "secondary new old backup ro rw admin root user plain raw b64 base64 hex str string "
        "v1 v2 key token secret password pass pwd"
    )
)
# Words after a credential word that make the phrase about it: "password manager: x".
_ABOUT = frozenset(
    _words(
        "manager policy reset hint hints rotation strength change changes changed expiry "
        "rules requirements length field page form protected protection store vault safe "
        "usage count budget limit lifetime ttl size type format prefix header endpoint "
        "location owner status history reminder generator fingerprint number is was are ist "
        "est es"
    )
)
# The last part of an identifier that is about a credential without holding one.
_METADATA = frozenset(
    _words(
        "env name names file path dir id ids ttl length len header prefix suffix endpoint url uri "
        "hash hashed digest algorithm alg backend type policy expiry expires exp lifetime "
        "rotation days seconds minutes hours location field var variable count size max min mode "
        "format version ref reference source store manager provider kind label hint reset "
        "changed required enabled strength salt kid usage limit timeout command cmd helper "
        "storage vault arn rule rules regex pattern check validator column table"
    )
)

# -- judging values ----------------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"(?i)\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|<[^<>]*>|%[A-Za-z_]+%|\[[^\]]*\]|[*x.•]+|…"
    r"|none|null|nil|true|false|n/?a|tbd|todo|unknown|unset|empty|redacted|hidden|omitted"
    r"|password|passwd|pass|pwd|secret|token|api[_-]?key|your[_-]?[a-z_-]+|my[_-]?[a-z_-]+"
    r"|changeme|change[_-]me|example|dummy|sample|placeholder|foo|bar|baz|xxx+|test|string"
    r"|str|int|bytes|bool|any|optional\[.*|list\[.*|dict\[.*|required|optional"
    r"|secret(?:str|bytes)|securestring"
)
_REFERENCE = re.compile(
    r"[A-Za-z_][\w.]*[\[(].*|[a-z_][a-z0-9_]*(?:\.[A-Za-z_]\w*)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
    r"|![A-Za-z_]+|\$\w+|@\w+|&\w+|\*\w+"
)
_PROSE_WORDS = frozenset(
    _words(
        """
    a an the this that these those it its is are was were be been being in on at to of for
    from by with without into onto over under about as and or but not no nor so too very
    also only just still always never now then here there where when how what which who
    whom whose why all any some each every both either neither one two three four five six
    seven eight nine ten first last next same other another more most less least much many
    few such own your my our their his her we you they i he she me us them see ask use check
    find get keep kept put set stored saved sent given shared known needed required must
    should can could will would may might shall do does did has have had via under inside
    der die das den dem des ein eine einen einem einer im ist sind war wird und oder nicht
    kein keine mit von vom zu zum zur für auf aus bei nach über unter bitte noch schon immer
    nie steht liegt le la les un une du est sont dans sur sous avec pour par pas ne et ou
    au aux chez ce cette el los las una unos unas del en es son está están con por para y se
    su sus al il lo gli è sono nel nella per e non os um uma da dos em no na é são com ou
    não het een zijn op met voor van niet w z jest są nie är och på med för till inte er og
    ikke
    """
    )
)
_DESCRIPTIONS = frozenset(
    _words(
        """
    fine ok okay good bad correct wrong strong weak long short simple complex new old same
    different valid invalid safe secure unsafe insecure set unset known unknown missing
    empty enough here there private public mandatory optional ready expired gone blank
    sicher unsicher geheim lang kurz neu alt falsch richtig gültig ungültig sûr fort faible
    court nouveau nouvelle ancien ancienne valide seguro segura fuerte débil largo larga
    corto corta nuevo nueva viejo vieja válido válida sicuro sicura forte debole lungo lunga
    nuovo nuova vecchio vecchia fraco fraca novo nova velho velha veilig sterk zwak nieuw
    """
    )
)
_DESCRIPTION_ENDINGS = (
    "ed", "ing", "ly", "ble", "ful", "less", "ous", "ive", "ent", "ant", "ert", "iert",
    "lich", "isch", "ig", "é", "ée", "és", "ées", "ado", "ada", "ido", "ida", "ato", "ata",
    "ito", "ita", "eux", "euse",
)  # fmt: skip
_PASSWORD_SYMBOLS = set("!@#$%^&*+=?~_-.")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Kinds of key and token that are not credentials, said just before the word.
_NOT_SECRET_KIND = re.compile(
    r"(?i)\b(?:public|publishable|pub|cache|sort|primary|foreign|partition|idempotency|object|"
    r"row|hash|dedup|lookup|index|map|composite|unique|shortcut|page|pagination|continuation|"
    r"next|sync|cancellation|music|answer)[ _-]?$"
)
# A variable or a query's parameter: $TOKEN, :key, $1, %(password)s, ?
_VARIABLE = re.compile(r"\$\w+|:\w+;?|\$\d+|%\(\w+\)s|%s|\?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")
_KEY_CHARS = re.compile(r"[A-Za-z0-9+/=_.~:-]+")
