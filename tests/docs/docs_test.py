#!/usr/bin/python3
"""The documentation works as written: it is checked against the binary and nginx.

1. Every relative link in the Markdown pages (README.md, SECURITY.md, CHANGELOG.md, docs/,
   clients/php/README.md and docs/, config/, deploy/, tests/fuzz/README.md) names a file of
   the repository, and every #anchor a heading (or an <a id>) of the page it points at, as
   GitHub renders them.
2. Every ratelimitd config in a ```yaml or ```json block of those pages, and every .yaml,
   .yml and .json file under config/, passes `ratelimitd --check-config` without a warning
   (RATELIMITD_HASH_SECRET set, as deployments set it). A block is a ratelimitd config when
   it is a map and most of its top-level keys are ratelimitd's; a block meant as a fragment
   (routes alone, an identity list) says so in its info string: ```yaml fragment. A fragment
   must still parse.
3. Every ```nginx block and every .conf file under config/ passes `nginx -t`, wrapped in the
   context it needs (as a whole file, in http {}, in server {} or in location {}); ${NAME}
   placeholders (the envsubst ones of config/nginx/) get sample values first.
4. Every Graphviz source docs/**/*.dot has its .svg beside it, rendered from that very source
   (render.sh stamps the source's SHA-256 into the SVG).
5. docs/design.md, which says which file does what, names only files of the repository (a
   path, or a file name that some file of the tree has; NAME is a placeholder) and only
   identifiers (`ns::name`, `name()`) some source under src/, include/ or cmake/ defines.

Usage: docs_test.py PATH_TO_RATELIMITD SOURCE_DIR
Exit 0 when all hold; else 1, with one line per problem naming file and line.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

binary, root = sys.argv[1], os.path.abspath(sys.argv[2])
failures = []


def fail(what):
    failures.append(what)


def rel(path):
    return os.path.relpath(path, root)


def markdown_pages():
    pages = ["README.md", "SECURITY.md", "CHANGELOG.md", "clients/php/README.md"]
    for pattern in ("docs/**/*.md", "config/**/*.md", "deploy/**/*.md", "clients/php/docs/*.md", "tests/fuzz/README.md"):
        pages += [rel(p) for p in glob.glob(f"{root}/{pattern}", recursive=True)]
    return sorted({p for p in pages if os.path.isfile(f"{root}/{p}")})


# --- Markdown: fenced blocks, headings, links ---------------------------------------------

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)([^`]*)$")


def fenced_blocks(text):
    """(info, attributes, first line number, body) of every fenced code block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            fence, info, attrs = m.group(2), m.group(3).lower(), m.group(4).split()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            yield info, attrs, i + 2, "\n".join(lines[i + 1:j])
            i = j
        i += 1


def prose_lines(text):
    """(line number, line) outside fenced blocks, with inline code spans blanked."""
    in_fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if in_fence:
            if line.strip().startswith(in_fence):
                in_fence = None
            continue
        if m:
            in_fence = m.group(2)
            continue
        yield n, re.sub(r"(`+)(.+?)\1", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, blanks as '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors_of(path):
    if path not in _anchors:
        text = open(path, encoding="utf-8").read()
        found, seen = set(), {}
        for _, line in prose_lines(text):
            for a in re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
                found.add(a)
        for _, line in heading_lines(text):
            base = slug(line)
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        _anchors[path] = found
    return _anchors[path]


def heading_lines(text):
    in_fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if in_fence:
            if line.strip().startswith(in_fence):
                in_fence = None
            continue
        if m:
            in_fence = m.group(2)
            continue
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            yield n, h.group(1)


LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")


def check_links(page):
    path = f"{root}/{page}"
    text = open(path, encoding="utf-8").read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(1) or m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            where = f"{page}:{n}: link {target}"
            dest = path if not file_part else os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not dest.startswith(root + os.sep) and dest != root:
                fail(f"{where}: leaves the repository")
                continue
            if not os.path.exists(dest):
                fail(f"{where}: no such file {rel(dest)}")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                fail(f"{where}: {rel(dest)} has no heading with the anchor #{anchor}")


# --- ratelimitd configs -------------------------------------------------------------------

def ratelimitd_keys():
    """The config file's top-level keys, as the binary names them for an unknown key."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("policies: {p: {algorithm: fixed_window, limit: 1, window: 1s}}\nzz_not_a_key: 1\n")
    r = subprocess.run([binary, "--check-config", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    keys = set(re.findall(r"[a-z][a-z0-9_]+", r.stderr.split("zz_not_a_key", 1)[-1]))
    if r.returncode == 0 or "policies" not in keys or "listen" not in keys:
        fail(f"cannot learn the config keys from --check-config: {r.stderr.strip()}")
    return keys


KEYS = ratelimitd_keys()


class AnyTagLoader(yaml.SafeLoader):
    """Safe YAML that reads an application's own tags (Symfony's `!service`) as plain values."""


def _untagged(loader, _suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


AnyTagLoader.add_multi_constructor("!", _untagged)


def parse(text, info):
    if info == "json":
        return json.loads(text)
    return yaml.load(text, Loader=AnyTagLoader)


def is_ratelimitd_config(tree):
    if not isinstance(tree, dict) or not tree:
        return False
    known = sum(1 for k in tree if k in KEYS)
    return known > 0 and known * 2 >= len(tree)


# As deployed: the hash secret comes from the environment, so a config need not hold it.
CHECK_ENV = {**os.environ, "RATELIMITD_HASH_SECRET": "docs-test-hash-secret-0123456789"}


def check_config_file(path, where):
    """--check-config passes, and warns of nothing (a documented config never leaves requests
    unlimited by omission)."""
    r = subprocess.run([binary, "--check-config", path], capture_output=True, text=True, env=CHECK_ENV)
    said = r.stderr.strip().replace(path, "the file")
    if r.returncode != 0:
        fail(f"{where}: --check-config fails: {said}")
    elif ": warning: " in r.stderr:
        fail(f"{where}: --check-config warns: {said}")


def check_config_text(text, suffix, where):
    with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
        f.write(text)
    check_config_file(f.name, where)
    os.unlink(f.name)


def check_config_blocks(page):
    text = open(f"{root}/{page}", encoding="utf-8").read()
    for info, attrs, line, body in fenced_blocks(text):
        if info not in ("yaml", "yml", "json"):
            continue
        where = f"{page}:{line}: ```{info} block"
        try:
            tree = parse(body, info)
        except (yaml.YAMLError, json.JSONDecodeError) as e:
            fail(f"{where}: does not parse: {str(e).splitlines()[0]}")
            continue
        if "fragment" in attrs or not is_ratelimitd_config(tree):
            continue
        check_config_text(body, ".json" if info == "json" else ".yaml", where)


def check_config_files():
    for path in sorted(glob.glob(f"{root}/config/**/*", recursive=True)):
        if not path.endswith((".yaml", ".yml", ".json")):
            continue
        info = "json" if path.endswith(".json") else "yaml"
        try:
            tree = parse(open(path, encoding="utf-8").read(), info)
        except (yaml.YAMLError, json.JSONDecodeError) as e:
            fail(f"{rel(path)}: does not parse: {str(e).splitlines()[0]}")
            continue
        if not is_ratelimitd_config(tree):
            continue
        check_config_file(path, rel(path))


# --- nginx --------------------------------------------------------------------------------

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
# Sample values of the envsubst placeholders of config/nginx/.
PLACEHOLDERS = {
    "LISTEN": "127.0.0.1:18080",
    "RATELIMITD_ADDR": "127.0.0.1:8080",
    "UPSTREAM_ADDR": "127.0.0.1:9000",
    "RATELIMITD_DOWN": "closed",
}


def fill_placeholders(text, where):
    def one(m):
        name = m.group(1)
        if name not in PLACEHOLDERS:
            fail(f"{where}: placeholder ${{{name}}} has no sample value in tests/docs/docs_test.py")
            return "x"
        return PLACEHOLDERS[name]
    return re.sub(r"\$\{([A-Z_][A-Z0-9_]*)\}", one, text)


def wrappers(body):
    """The snippet as a whole nginx.conf in each context it may be written for."""
    yield "main", body if re.search(r"^\s*events\s*\{", body, re.M) else body + "\nevents {}\n"
    yield "http", "events {}\nhttp {\n" + body + "\n}\n"
    yield "server", "events {}\nhttp {\nserver {\nlisten 127.0.0.1:18081;\n" + body + "\n}\n}\n"
    yield "location", "events {}\nhttp {\nserver {\nlisten 127.0.0.1:18081;\nlocation / {\n" + body + "\n}\n}\n}\n"


def nginx_t(conf_text, scratch):
    conf = f"{scratch}/nginx.conf"
    temps = "".join(f"{kind}_temp_path {scratch}/{kind};\n"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf_text = re.sub(r"(^|\n)(\s*http\s*\{)", r"\1\2\n" + temps.replace("\\", "\\\\"), conf_text, count=1)
    open(conf, "w").write(conf_text)
    r = subprocess.run([NGINX, "-t", "-q", "-p", scratch + "/", "-e", "stderr", "-c", conf,
                        "-g", f"pid {scratch}/nginx.pid; error_log stderr;"],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def check_nginx(body, where):
    body = fill_placeholders(body, where)
    errors = []
    with tempfile.TemporaryDirectory() as scratch:
        for context, conf_text in wrappers(body):
            ok, err = nginx_t(conf_text, scratch)
            if ok:
                return
            errors.append(f"[{context}] {err.splitlines()[0] if err else '?'}")
    fail(f"{where}: nginx -t fails in every context: " + "; ".join(errors))


def check_nginx_snippets(pages):
    if not os.access(NGINX, os.X_OK):
        fail("nginx is not installed: the nginx snippets cannot be checked")
        return
    for page in pages:
        text = open(f"{root}/{page}", encoding="utf-8").read()
        for info, attrs, line, body in fenced_blocks(text):
            if info == "nginx" and "fragment" not in attrs:
                check_nginx(body, f"{page}:{line}: ```nginx block")
    for path in sorted(glob.glob(f"{root}/config/**/*.conf", recursive=True)):
        check_nginx(open(path, encoding="utf-8").read(), rel(path))


# --- pictures --------------------------------------------------------------------------------

def check_rendered_pictures():
    """Every docs/**/*.dot has its .svg, stamped by render.sh with the source's SHA-256."""
    for dot in sorted(glob.glob(f"{root}/docs/**/*.dot", recursive=True)):
        svg = dot[:-4] + ".svg"
        if not os.path.exists(svg):
            fail(f"{rel(dot)}: no {os.path.basename(svg)} beside it (run its render.sh)")
            continue
        digest = hashlib.sha256(open(dot, "rb").read()).hexdigest()
        if f"sha256 {digest}" not in open(svg, encoding="utf-8").read():
            fail(f"{rel(svg)}: not rendered from the current {os.path.basename(dot)} (run its render.sh)")


# --- the design page's claims ------------------------------------------------------------

DESIGN_FILE = re.compile(r"[A-Za-z0-9_./-]+\.(?:cpp|hpp|lua|cmake|md|py|sh|yaml|json|proto)\b")
DESIGN_IDENTIFIER = re.compile(r"`([A-Za-z_]\w*(?:::[A-Za-z_]\w*)+|[A-Za-z_]\w*(?=\(\)))(?:\(\))?`")


def tree_files():
    out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=False).stdout
    return out.split() or [rel(p) for p in glob.glob(f"{root}/**/*", recursive=True) if os.path.isfile(p)]


def check_design_names():
    """docs/design.md names files that exist and identifiers the sources define."""
    page = f"{root}/docs/design.md"
    text = open(page, encoding="utf-8").read()
    files = tree_files()
    names = {os.path.basename(f) for f in files}
    for name in sorted(set(DESIGN_FILE.findall(text))):
        if "NAME" in name or "..." in name or name.startswith("_"):
            continue
        found = any(f == name or f.endswith("/" + name) for f in files) if "/" in name else name in names
        if not found:
            fail(f"docs/design.md: names {name}, which is no file of the repository")
    sources = "".join(open(f"{root}/{f}", encoding="utf-8", errors="replace").read()
                      for f in files if f.startswith(("src/", "include/", "cmake/")))
    for ident in sorted(set(DESIGN_IDENTIFIER.findall(text))):
        if not re.search(r"\b" + re.escape(ident.split("::")[-1]) + r"\b", sources):
            fail(f"docs/design.md: names {ident}, which no source under src/, include/ or cmake/ has")


def main():
    pages = markdown_pages()
    for page in pages:
        check_links(page)
        check_config_blocks(page)
    check_config_files()
    check_nginx_snippets(pages)
    check_rendered_pictures()
    check_design_names()
    for f in failures:
        print(f)
    print(f"docs: {len(pages)} pages, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
