#!/usr/bin/env bash
# The docs cannot drift (issue 44 item 5). The design map: every source file docs/DESIGN.md names in
# backquotes exists in the tree, every `nasperf_*` it names is a library the tree builds
# (or a metric the collector serves), every row of its architecture table (§2) names a folder
# that exists, the library that folder's CMakeLists.txt builds and public headers that
# are in that folder, and every library the tree builds has its row. Runtime paths (a
# leading /), placeholders (<group>, *) and generated proto headers (X.pb.h from X.proto)
# are not source files. The figures: docs/PERFORMANCE.md opens with "## Current figures", a
# table with a row for every scripts/bench.sh section whose links reach a dated entry, and
# the dated entries follow newest first.
source "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$root" <<'EOF' || fail "the docs have drifted from the tree (the lines above)"
import os, re, subprocess, sys

root = sys.argv[1]
design = open(os.path.join(root, "docs/DESIGN.md"), encoding="utf-8").read()
files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout.split()
if not files:
    sys.exit("no files from git ls-files in " + root)
source_name = re.compile(r"^[A-Za-z0-9_./-]+\.(h|cc|sh|cmake|proto|toml|py)$")
problems = []

def exists(name):
    proto = re.sub(r"(\.grpc)?\.pb\.h$", ".proto", name)
    return any(f == n or f.endswith("/" + n) for f in files for n in {name, proto})

for lineno, line in enumerate(design.splitlines(), 1):
    for span in re.findall(r"`([^`]+)`", line):
        for word in span.split():
            word = word.strip("(),;:")
            if word.startswith("/") or "<" in word or "*" in word or not source_name.match(word):
                continue
            if not exists(word):
                problems.append(f"docs/DESIGN.md:{lineno}: `{word}` names no file in the tree")

built = {}  # each library the tree builds: the CMakeLists.txt that builds it (each file read once)
metrics = set()
for f in files:
    if f.endswith("CMakeLists.txt"):
        for library in re.findall(r"add_library\(\s*(nasperf_[a-z0-9_]+)", open(os.path.join(root, f)).read()):
            built[library] = f
    elif f.startswith("collector/") and f.endswith(".cc"):
        metrics.update(re.findall(r'"(nasperf_[a-z0-9_]+)"', open(os.path.join(root, f)).read()))
for lineno, line in enumerate(design.splitlines(), 1):
    for span in re.findall(r"`([^`]+)`", line):
        for word in re.findall(r"\bnasperf_[a-z0-9_]+\b", span):
            if word not in built and word not in metrics:
                problems.append(f"docs/DESIGN.md:{lineno}: `{word}` is neither a library the tree builds nor a collector metric")

row = re.compile(r"^\| `([a-z0-9_]+)/` \| `(nasperf_[a-z0-9_]+)` \|.*\|([^|]*)\|\s*$")
libraries_in_table = set()
for lineno, line in enumerate(design.splitlines(), 1):
    m = row.match(line)
    if not m:
        continue
    folder, library, headers = m.groups()
    libraries_in_table.add(library)
    cmake = f"{folder}/CMakeLists.txt"
    if cmake not in files:
        problems.append(f"docs/DESIGN.md:{lineno}: folder {folder}/ has no CMakeLists.txt")
        continue
    if built.get(library) != cmake:
        problems.append(f"docs/DESIGN.md:{lineno}: {folder}/CMakeLists.txt builds no library {library}")
    for header in " ".join(re.findall(r"`([^`]+)`", headers)).split():
        proto = re.sub(r"(\.grpc)?\.pb\.h$", ".proto", header)
        if not os.path.isfile(os.path.join(root, folder, header)) and not os.path.isfile(os.path.join(root, folder, proto)):
            problems.append(f"docs/DESIGN.md:{lineno}: {folder}/{header} is not in the tree")

for library, f in sorted(built.items()):
    if f.count("/") == 1 and not f.startswith(("tests/", "cmake/")) and library not in libraries_in_table:
        problems.append(f"{f} builds {library}, which docs/DESIGN.md's architecture table does not list")

perf = open(os.path.join(root, "docs/PERFORMANCE.md"), encoding="utf-8").read()
headings = re.findall(r"^## (.*)$", perf, re.M)
def anchor(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
if not headings or headings[0] != "Current figures":
    problems.append("docs/PERFORMANCE.md: the first section is not \"## Current figures\"")
else:
    current = perf.split("\n## ", 2)[1]
    anchors = {anchor(h) for h in headings}
    for target in re.findall(r"\]\(#([^)]+)\)", current):
        if target not in anchors:
            problems.append(f"docs/PERFORMANCE.md: the current table links #{target}, which no heading makes")
    bench = open(os.path.join(root, "scripts/bench.sh")).read()
    usage = re.search(r"scripts/bench.sh \[([a-z|]+)\]", bench)
    sections = [w for w in usage.group(1).split("|") if w != "all"] if usage else []
    if not sections:
        problems.append("scripts/bench.sh: no usage line 'scripts/bench.sh [a|b|...]' to read the sections from")
    for section in sections:
        if not re.search(r"^\| " + section + r" \|", current, re.M):
            problems.append(f"docs/PERFORMANCE.md: the current table has no row for `scripts/bench.sh {section}`")
dates = []
for h in headings[1:]:
    m = re.match(r"(\d{4}-\d{2}-\d{2}) — ", h)
    if not m:
        problems.append(f"docs/PERFORMANCE.md: \"## {h}\" is not a dated entry (## YYYY-MM-DD — what)")
    else:
        dates.append(m.group(1))
for newer, older in zip(dates, dates[1:]):
    if older > newer:
        problems.append(f"docs/PERFORMANCE.md: an entry of {older} follows one of {newer} (newest first)")

if not libraries_in_table:
    problems.append("docs/DESIGN.md: no architecture table rows found (| `folder/` | `nasperf_x` | ... |)")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
echo "ok: docs/DESIGN.md names only files and libraries the tree has; docs/PERFORMANCE.md opens with the current figures, newest entry first"
