#!/usr/bin/env python3
"""The house size rules, checked over src/, include/ and tests/:

  * no function longer than 60 lines (from the line of its name to its closing brace);
  * no file longer than 500 lines (C++ sources and headers, Python, shell, Lua);
  * no class whose member functions are defined in more than one .cpp file.

Prints every breach, one a line, and exits 1 when there is one (0 otherwise). The C++ is read
by brace matching after comments, string and character literals and preprocessor lines are
blanked: no compiler is needed, so the check runs as a test in every build (ctest
lint.size_rules).

Breaches not yet paid off are listed in scripts/size_rules_debt.txt with their size then: one
listed is tolerated at that size or less, and a listed one that no longer breaches fails the
check too (the list only shrinks; delete its line).

    scripts/size_rules.py [ROOT]
"""
import pathlib
import re
import sys

MAX_FUNCTION_LINES = 60
MAX_FILE_LINES = 500
FOLDERS = ("src", "include", "tests")
CPP = {".cpp", ".hpp", ".h", ".cc"}
CHECKED = CPP | {".py", ".sh", ".lua"}
# Test data (fuzz corpora, recorded replies) is not code.
SKIPPED = ("tests/fuzz/corpus/", "tests/data/")

QUALIFIERS = re.compile(r"(\s|const\b|noexcept(\s*\([^()]*\))?|override\b|final\b|mutable\b|&&?|volatile\b)*$")
CLASS_KEYWORD = re.compile(r"(^|[\s>])(namespace|class|struct|union|enum)\b")
OPERATOR = re.compile(r"\boperator\s*(\(\)|[^\s(]+)")
# The defined name, last token before its '(': Class::name, Outer::Inner::~Inner, Class::operator==.
QUALIFIED_NAME = re.compile(r"(?:^|[\s*&])((?:[A-Z]\w*(?:<[^<>()]*>)?::)+)(?:~?\w+|operator\S*)\s*\($")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            wipe(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i)
            delimiter = text[i + 2:open_paren]
            j = text.find(")" + delimiter + '"', open_paren)
            j = n if j < 0 else j + len(delimiter) + 2
            wipe(i, j)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def is_function_header(header):
    """Whether the text before a '{' at namespace or class scope opens a function's body."""
    h = OPERATOR.sub("op", header).strip()
    if "(" not in h or CLASS_KEYWORD.search(h.split("(")[0]):
        return False
    depth = 0
    for ch in h:
        depth += ch in "([<"
        depth -= ch in ")]>"
        if ch == "=" and depth == 0:
            return False  # a variable's initialiser (a lambda or a brace list)
    h = re.sub(r"\)\s*->.*$", ")", h, flags=re.S)  # trailing return type
    h = QUALIFIERS.sub("", h).rstrip()
    if h.endswith(")"):
        return True
    # A constructor whose initialiser list ends in a braced member: ") : a_(x), b_{y}".
    return h.endswith("}") and re.search(r"\)\s*(noexcept\s*)?:", h) is not None


def scan(path, text):
    """Yields ('function', name, first line, last line) and ('member', class key, path)."""
    code = blank(text)
    line_of = [0] * (len(code) + 1)
    line = 1
    for k, ch in enumerate(code):
        line_of[k] = line
        line += ch == "\n"
    stack = []  # (kind, header start, namespace name or function name, first line)
    header_start = 0
    namespaces = []
    for i, ch in enumerate(code):
        if ch == ";":
            header_start = i + 1
        elif ch == "{":
            header = code[header_start:i]
            outer = stack[-1][0] if stack else "scope"
            if outer in ("function", "block", "init"):
                stack.append(("block", header_start, None, 0))
            elif re.match(r"\s*(namespace\b|extern\s)", header) or (
                    CLASS_KEYWORD.search(header.split("(")[0]) and "(" not in header.split("{")[0].split(":")[0]):
                name = re.match(r"\s*namespace\s*([\w:]*)", header)
                label = (name.group(1) or f"<anonymous {path}>") if name else None
                stack.append(("scope", header_start, label, 0))
                if label is not None:
                    namespaces.append(label)
            elif is_function_header(header):
                paren = OPERATOR.sub(lambda m: "o" * len(m.group(0)), header).find("(")
                signature = header[:paren + 1].strip()
                if re.search(r"\bTEST\w*\($", signature):  # a test: its suite and name
                    signature = re.sub(r"\s+", " ", header[:header.find(")", paren) + 1].strip())
                stack.append(("function", header_start, signature, line_of[header_start + paren]))
                qualified = QUALIFIED_NAME.search(signature)
                if qualified and path.suffix != ".hpp":
                    yield ("member", "::".join(namespaces) + "::" + qualified.group(1).rstrip(":"), path)
            else:
                stack.append(("init", header_start, None, 0))  # a brace initialiser
                continue
            header_start = i + 1
        elif ch == "}":
            if not stack:
                continue
            kind, start, label, first = stack.pop()
            if kind == "function":
                yield ("function", label, first, line_of[i])
            if kind == "scope" and label is not None:
                namespaces.pop()
            if kind == "init":
                header_start = start  # the initialiser is part of the header it is in
            else:
                header_start = i + 1


def read_debt(root):
    """{breach key: lines then} from scripts/size_rules_debt.txt ('#' lines are comments)."""
    debt = {}
    path = root / "scripts" / "size_rules_debt.txt"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, lines = line.rpartition(" | ")
                debt[key] = int(lines)
    return debt


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    breaches = []  # (key, lines, message)
    members = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if not path.is_file() or path.suffix not in CHECKED or str(rel).startswith(SKIPPED):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if lines > MAX_FILE_LINES:
                breaches.append((f"{rel}", lines, f"{rel}: {lines} lines (file limit {MAX_FILE_LINES})"))
            if path.suffix not in CPP:
                continue
            for item in scan(rel, text):
                if item[0] == "function":
                    _, name, first, last = item
                    if last - first + 1 > MAX_FUNCTION_LINES:
                        breaches.append((f"{rel} {name}", last - first + 1, f"{rel}:{first}: {name} "
                                         f"{last - first + 1} lines (function limit {MAX_FUNCTION_LINES})"))
                else:
                    members.setdefault(item[1], set()).add(str(item[2]))
    for cls, files in sorted(members.items()):
        if len(files) > 1:
            breaches.append((cls, 0, f"{cls}: member functions defined in {len(files)} files "
                                     f"({', '.join(sorted(files))})"))
    debt = read_debt(root)
    failures = [message for key, lines, message in breaches if key not in debt or lines > debt[key]]
    found = {key for key, _, _ in breaches}
    failures += [f"{key}: listed in scripts/size_rules_debt.txt but within the rules now: delete its line"
                 for key in sorted(debt) if key not in found]
    for message in failures:
        print(message)
    print(f"size rules: {len(breaches)} breach(es), {len(breaches) - len(failures)} of them listed debt; "
          f"{len(failures)} failure(s)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
