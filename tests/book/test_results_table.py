"""The results-at-a-glance table (book/results.md): every value is a number pasted from a chapter.

The page pastes each value from the chapter that computes it with
``{glue:text}`chapter.md::key:fmt``` (myst-nb reads ``<chapter>.glue.json``
from the build's ``jupyter_execute`` folder). Two ways a value can go missing:

* the key is not glued by that chapter: the -W build fails with "Glue
  reference ... not found", and the pasted text is simply absent from the
  cell; ``test_every_key_is_glued_by_its_chapter`` finds it from the sources,
  without a build;
* a row still holds a placeholder: ``test_built_table_holds_numbers`` reads the
  built page (fixture ``built_site``) and requires, in every row of both tables
  (one number per threshold, and the versions compared), a non-empty value
  cell made of pasted numbers, and no placeholder text anywhere.

A reader who follows a link from a table should land on the section that holds
the number, not on the top of a chapter page: at least 90 % of the tables'
links carry an anchor (``{ref}`` to a section label, ``{numref}`` to a figure,
``{eq}`` to an equation), counted on the source (``test_table_links_land_on_sections``)
and on the built page (``test_built_table_links_carry_anchors``).

The parsing of the built table is tested on small hand-written pages first.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest
from bs4 import BeautifulSoup  # installed with jupyter-book (pydata-sphinx-theme needs it)

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
RESULTS = BOOK / "results.md"
TABLE_ID = "results-table"
VERSIONS_TABLE_ID = "results-versions-table"
ANCHORED_SHARE = 0.9
VALUE_HEADER = "Value"
PLACEHOLDER = re.compile(r"\?\?|placeholder|todo|tbd|to be filled|\bnan\b|\binf\b", re.I)
NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")
PASTE = re.compile(r"\{glue:text\}`([\w/.-]+)::(\w+)(:[^`]*)?`")


def table_problems(html: str, table_id: str = TABLE_ID) -> list[str]:
    """What is wrong with the results table ``table_id`` of a built page (empty list: nothing)."""
    soup = BeautifulSoup(html, "html.parser")
    table = soup.find(id=table_id)
    if table is None:
        return [f"no element with id {table_id!r}"]
    if table.name != "table":
        table = table.find("table")
    header = [th.get_text(" ", strip=True) for th in table.find("thead").find_all("th")]
    if VALUE_HEADER not in header:
        return [f"no {VALUE_HEADER!r} column in {header}"]
    col = header.index(VALUE_HEADER)
    problems = []
    rows = table.find("tbody").find_all("tr")
    if not rows:
        problems.append("the table has no rows")
    for i, tr in enumerate(rows, 1):
        cells = tr.find_all("td")
        label = " / ".join(c.get_text(" ", strip=True) for c in cells[:2])
        texts = [c.get_text(" ", strip=True) for c in cells]
        if len(cells) != len(header) or not all(texts):
            problems.append(f"row {i} ({label}): an empty or missing cell")
            continue
        if any(PLACEHOLDER.search(t) for t in texts):
            problems.append(f"row {i} ({label}): placeholder text")
            continue
        pasted = [s.get_text(strip=True) for s in cells[col].find_all(class_="pasted-text")]
        if not pasted:
            problems.append(f"row {i} ({label}): no pasted value in {texts[col]!r}")
        bad = [p for p in pasted if not NUMBER.fullmatch(p)]
        if bad:
            problems.append(f"row {i} ({label}): pasted values that are not numbers: {bad}")
    return problems


def page(rows: list[list[str]], header=("Threshold", "Theory or method", "Size", VALUE_HEADER)) -> str:
    """A page with a results table as Sphinx writes it (cells given as HTML)."""
    head = "".join(f"<th class='head'><p>{h}</p></th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td><p>{c}</p></td>" for c in row) + "</tr>" for row in rows)
    return (f"<html><body><table class='table' id='{TABLE_ID}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></body></html>")


def glued(text: str) -> str:
    return f'<span class="pasted-text">{text}</span>'


GOOD = ["P_3", "mean field", "L = 32", glued("342")]


def test_parser_accepts_pasted_numbers():
    spinodals = ["spinodals", "MAP", "L = 32", f"{glued('297.4')} – {glued('372.1')}"]
    bound = ["P_2 jump", "MAP", "V = 4", f"L ≥ {glued('89')}"]
    error = ["P_3", "sampling", "L = 32", f"{glued('590')} ± {glued('-1.5e+01')}"]
    assert table_problems(page([GOOD, spinodals, bound, error])) == []


@pytest.mark.parametrize("value, why", [
    ("", "empty or missing"),
    ("342", "no pasted value"),  # typed in, not glued
    ("L ≥ ", "no pasted value"),  # the glue reference was dropped by a failing build
    (glued("np.float64(342.0)"), "not numbers"),
    (glued("nan"), "placeholder"),
    ("PLACEHOLDER: causal value", "placeholder"),
    (glued("342") + " ??", "placeholder"),
])
def test_parser_flags_missing_or_placeholder_values(value, why):
    problems = table_problems(page([GOOD, ["P_3", "causal mask", "L = 32", value]]))
    assert len(problems) == 1 and why in problems[0], problems


def test_parser_flags_a_placeholder_in_any_column():
    problems = table_problems(page([["P_3", "causal mask (TODO)", "L = 32", glued("700")]]))
    assert len(problems) == 1 and "placeholder" in problems[0]


def test_parser_needs_the_table_and_its_value_column():
    assert "no element" in table_problems("<html><body><table></table></body></html>")[0]
    assert "no 'Value' column" in table_problems(page([GOOD[:3]], header=("Threshold", "Theory", "Size")))[0]


def pasted_references() -> list[tuple[str, str]]:
    """``(document, key)`` of every cross-page paste on the results page."""
    return [(doc, key) for doc, key, _ in PASTE.findall(RESULTS.read_text(encoding="utf-8"))]


def glued_keys(source: Path) -> list[re.Pattern]:
    """The keys a chapter glues, as patterns (an f-string key matches any text in its braces).

    An f-string key that starts with a brace (``f"{prefix}_{name}"``) would match
    nearly any key, so it is left out: a key pasted from such a glue call is
    reported missing, on the safe side. A key glued from a loop over
    ``(key, value)`` pairs (``for key, value in (("cm_Px_map", x), ...): glue(key, ...)``)
    is read from the pairs: the string that opens a pair, in a chapter that glues
    a variable key.
    """
    text = source.read_text(encoding="utf-8")
    keys = re.findall(r"""\bglue\(\s*(f?)(["'])(.+?)\2""", text)
    found = [re.compile(re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(k)) if f else re.escape(k))
             for f, _, k in keys if not (f and k.startswith("{"))]
    if re.search(r"\bglue\(\s*[A-Za-z_]\w*\s*,", text):
        found += [re.compile(re.escape(k)) for _, k in re.findall(r"""\(\s*(["'])(\w+)\1\s*,""", text)]
    return found + [re.compile(k) for k in _glue_values_keys(source)]


def _key_pattern(node: ast.expr) -> str | None:
    """A string constant as itself, an f-string with its fields as ``.+``, ``"prefix" + name`` as
    ``prefix.+``; ``None`` for anything else and for a key that starts with a variable part (it would
    match nearly any key)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "prefix_" + name
        left = _key_pattern(node.left)
        return None if left is None else left + (_key_pattern(node.right) or ".+")
    return None


def _glue_values_keys(source: Path) -> list[str]:
    """Key patterns of the ``glue_values`` and ``glue_fields`` calls in a chapter's code cells.

    ``glue_values(key=value)`` glues ``key``; ``glue_values(**{"key": v})`` and
    ``glue_values(**{f"key_{x}": v for x in ...})`` glue the dict's keys (f-string fields
    as ``.+``); ``glue_fields("prefix_", result)`` glues ``prefix_`` and a field name.
    """
    patterns = []
    for cell in jupytext.read(source).cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython magics
            continue
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if name == "glue_values":
                for kw in call.keywords:
                    if kw.arg is not None:
                        patterns.append(re.escape(kw.arg))
                    elif isinstance(kw.value, ast.Dict):
                        patterns += [p for p in map(_key_pattern, (k for k in kw.value.keys if k)) if p]
                    elif isinstance(kw.value, ast.DictComp):
                        patterns += [p for p in [_key_pattern(kw.value.key)] if p]
            elif name == "glue_fields" and call.args:
                prefix = _key_pattern(call.args[0])
                patterns += [prefix + r"\w+"] if prefix else []
    return patterns


def test_results_page_pastes_from_the_chapters():
    refs = pasted_references()
    assert len(refs) >= 20, refs
    assert {doc for doc, _ in refs} >= {"linear_attention.md", "softmax_attention.md"}


@pytest.mark.parametrize("doc, key", pasted_references(), ids=[f"{d}::{k}" for d, k in pasted_references()])
def test_every_key_is_glued_by_its_chapter(doc, key):
    source = BOOK / doc  # relative to the results page, which is in book/
    assert source.is_file(), f"results.md pastes from {doc}, which is not a page of book/ (write the .md suffix)"
    assert any(p.fullmatch(key) for p in glued_keys(source)), f"{doc} glues no key {key!r}"


def test_glued_keys_reads_plain_and_f_string_keys(tmp_path):
    src = tmp_path / "x.md"
    src.write_text('glue("sm_P3", 1.0, display=False)\n    glue(f"la_K_{Ls}_{Vs}", K, display=False)\n')
    patterns = glued_keys(src)
    assert any(p.fullmatch("sm_P3") for p in patterns)
    assert any(p.fullmatch("la_K_32_4") for p in patterns)
    assert not any(p.fullmatch("sm_P3_fluct") for p in patterns)
    src.write_text('glue(f"{prefix}_{name}", float(value), display=False)\n')
    assert glued_keys(src) == []
    src.write_text('for key, value in (("cm_Px_map", 1.0), ("cm_Px_post", 2.0)):\n    glue(key, value, display=False)\n')
    assert [p.pattern for p in glued_keys(src)] == ["cm_Px_map", "cm_Px_post"]
    src.write_text('print(("cm_Px_map", 1.0))\n')  # a pair, but no glue of a variable key
    assert glued_keys(src) == []


@pytest.mark.parametrize("table_id", [TABLE_ID, VERSIONS_TABLE_ID])
def test_built_table_holds_numbers(built_site, table_id):
    html = (built_site / "book" / "results.html").read_text(encoding="utf-8")
    problems = table_problems(html, table_id)
    assert not problems, f"results table {table_id} on the built site:\n" + "\n".join(problems)


# --------------------------------------------------------------------------
# links: each lands on the section that holds its number
# --------------------------------------------------------------------------

ANCHORED_ROLE = re.compile(r"\{(ref|numref|eq)\}`[^`]+`")
PAGE_ROLE = re.compile(r"\{doc\}`[^`]+`")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def source_links(text: str) -> tuple[int, int]:
    """``(anchored, all)`` links in the rows of the Markdown tables of ``text``.

    Anchored: ``{ref}``, ``{numref}``, ``{eq}``, or a Markdown link with a
    ``#fragment``; not anchored: ``{doc}`` and a Markdown link to a page.
    """
    rows = [line for line in text.splitlines() if line.startswith("|") and not line.startswith("|---")]
    anchored = total = 0
    for row in rows:
        roles = len(ANCHORED_ROLE.findall(row))
        pages = len(PAGE_ROLE.findall(row))
        links = MD_LINK.findall(row)
        anchored += roles + sum("#" in url for url in links)
        total += roles + pages + len(links)
    return anchored, total


def built_links(html: str) -> tuple[int, int]:
    """``(anchored, all)`` internal links inside the tables of a built page."""
    soup = BeautifulSoup(html, "html.parser")
    hrefs = [a.get("href", "") for table in soup.find_all("table") for a in table.find_all("a")]
    internal = [h for h in hrefs if h and not h.startswith(("http:", "https:", "mailto:"))]
    return sum("#" in h for h in internal), len(internal)


def test_link_counters_on_small_pages():
    rows = ["| a | b |", "|---|---|", "| {ref}`x` | {doc}`y` |", "| {numref}`Fig. %s <f>` | [t](p.md#s) |",
            "| [u](q.md) | {eq}`e` |", "{doc}`outside`"]
    text = "\n".join(rows)
    assert source_links(text) == (4, 6)
    html = ("<table><tr><td><a href='a.html#s'>1</a><a href='b.html'>2</a><a href='#here'>3</a>"
            "<a href='https://x.org/'>4</a></td></tr></table><a href='c.html'>5</a>")
    assert built_links(html) == (2, 3)


def test_table_links_land_on_sections():
    anchored, total = source_links(RESULTS.read_text(encoding="utf-8"))
    assert total >= 20, f"only {total} links in the results tables"
    assert anchored >= ANCHORED_SHARE * total, \
        f"{anchored} of {total} table links carry an anchor: link {{ref}} section labels (at least 90 %)"


def test_built_table_links_carry_anchors(built_site):
    anchored, total = built_links((built_site / "book" / "results.html").read_text(encoding="utf-8"))
    assert total >= 20 and anchored >= ANCHORED_SHARE * total, f"{anchored} of {total} links carry an anchor"


def test_glued_keys_reads_glue_values_and_glue_fields(tmp_path):
    page = tmp_path / "chapter.md"
    page.write_text("""---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

```{code-cell} ipython3
cl.glue_values(a_one=1, **{"b_two": 2, f"c_{n}_x": 3}, **{f"d_{v}": 4 for v in vs})
cl.glue_values(**{"e_" + k: x for k, x in d.items()}, **{f"{p}_free": 5 for p in ps})
cl.glue_fields("f_", result)
```
""", encoding="utf-8")
    patterns = glued_keys(page)

    def glued(key):
        return any(p.fullmatch(key) for p in patterns)

    assert all(map(glued, ("a_one", "b_two", "c_7_x", "d_map", "e_L_jump", "f_barrier")))
    # keys not glued, and keys that start with a variable part (they would match anything)
    assert not any(map(glued, ("a_two", "b_one", "c_7_y", "x_free", "g_other")))
