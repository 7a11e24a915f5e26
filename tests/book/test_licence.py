"""Licences, attribution and citation metadata (issue 20).

* ``CITATION.cff`` is valid Citation File Format 1.2.0 (the official JSON schema,
  vendored in ``tests/data/``), and the schema rejects broken copies of it.
* The BibTeX entry on the About page agrees with ``CITATION.cff``, which agrees
  with ``copylib.__version__`` and ``_config.yml``.
* The root licence files exist, hold the full licence texts, and are named in
  README.md, pyproject.toml and the footer of every page.
* The introduction attributes the source paper as CC BY 4.0 asks, and the About page
  also says what the book changes and adds, its licences and how to cite it.
* Every vendored third-party package in ``vendor/site/`` ships a licence file.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "tests" / "data" / "cff-schema-1.2.0.json"
CFF = ROOT / "CITATION.cff"
INTRO = ROOT / "book" / "intro.md"
ABOUT = ROOT / "book" / "about.md"
CODE_LICENCE = "LICENSE"
CONTENT_LICENCE = "LICENSE-CC-BY-4.0"
# sha256 of the CC BY 4.0 legal code as published by Creative Commons (legalcode.txt,
# the same bytes as the LICENSE of citation-file-format/citation-file-format).
CC_BY_4_0_SHA256 = "d26e56663498f0f17dbcb8a9bd50d344828948be08265f4fc97b4fc612e9be71"
PAPER_URL = "https://arxiv.org/abs/2606.12058"
CC_BY_URL = "https://creativecommons.org/licenses/by/4.0/"


def _strings_for_dates(value):
    """YAML reads an unquoted 2026-12-01 as a date; CFF means the string (as cffconvert does)."""
    if isinstance(value, dict):
        return {k: _strings_for_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings_for_dates(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def load_cff() -> dict:
    return _strings_for_dates(yaml.safe_load(CFF.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def errors(validator, document) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in validator.iter_errors(document)]


# ---------------------------------------------------------------- CITATION.cff

def test_citation_cff_is_valid_cff_1_2_0(validator):
    cff = load_cff()
    assert cff["cff-version"] == "1.2.0"
    assert not errors(validator, cff), errors(validator, cff)


@pytest.mark.parametrize("mutation", [
    "no title", "no authors", "unknown licence id", "bad date", "unknown key", "reference without type",
])
def test_schema_rejects_a_broken_citation(validator, mutation):
    """The validation can fail: each broken copy of CITATION.cff is rejected."""
    cff = copy.deepcopy(load_cff())
    if mutation == "no title":
        del cff["title"]
    elif mutation == "no authors":
        cff["authors"] = []
    elif mutation == "unknown licence id":
        cff["license"] = ["MIT", "CC-BY-4"]
    elif mutation == "bad date":
        cff["date-released"] = "2026-13-01"
    elif mutation == "unknown key":
        cff["licence"] = "MIT"
    elif mutation == "reference without type":
        del cff["references"][0]["type"]
    assert errors(validator, cff), f"the schema accepted a CITATION.cff with {mutation}"


def library_version() -> str:
    """``copylib.__version__`` as written in its source, the one place the version is set."""
    match = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "copylib" / "__init__.py").read_text(), re.M)
    assert match, "copylib/__init__.py must set __version__ to a string literal"
    return match.group(1)


def test_the_version_is_set_in_one_place():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "copylib.__version__"}


def test_citation_describes_the_book_and_copylib():
    cff = load_cff()
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert cff["type"] == "software"
    assert cff["title"] == config["title"]
    assert cff["authors"] == [{"name": config["author"]}]
    assert str(cff["version"]) == library_version()
    assert sorted(cff["license"]) == ["CC-BY-4.0", "MIT"]
    datetime.date.fromisoformat(cff["date-released"])


def test_citation_references_the_paper():
    papers = [r for r in load_cff()["references"] if PAPER_URL in json.dumps(r)]
    assert len(papers) == 1, "CITATION.cff must list the arXiv paper under references"
    paper = papers[0]
    assert paper["type"] == "article"
    assert paper["title"] == "Phase Transitions in Attention: A Bayesian Theory of Copy Head Emergence"
    assert [a["family-names"] for a in paper["authors"]] == [
        "Lavie", "Fischer", "Lekov", "Van Maele", "Ringel", "Helias"]
    assert paper["year"] == 2026
    assert paper["license"] == "CC-BY-4.0"
    assert {"type": "other", "value": "arXiv:2606.12058"} in [
        {k: i[k] for k in ("type", "value")} for i in paper["identifiers"]]


def _bibtex_fields(text: str) -> dict[str, str]:
    """Fields of the single ```bibtex entry in ``text`` (braces and whitespace normalised)."""
    blocks = re.findall(r"^```bibtex\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 1, f"expected one ```bibtex block, found {len(blocks)}"
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*(\{.*?\})\s*,?\s*$", blocks[0], re.M | re.S))
    return {k.lower(): " ".join(v.replace("{", "").replace("}", "").split()) for k, v in fields.items()}


def test_bibtex_on_the_about_page_agrees_with_citation_cff():
    cff = load_cff()
    bib = _bibtex_fields(ABOUT.read_text(encoding="utf-8"))
    assert bib["title"] == cff["title"]
    assert bib["version"] == str(cff["version"])
    assert bib["year"] == cff["date-released"][:4]
    assert bib["author"] == cff["authors"][0]["name"]


def test_bibtex_parser_sees_a_disagreement():
    """The agreement check can fail: a changed version is noticed."""
    text = ABOUT.read_text(encoding="utf-8").replace("version = {0.1.0}", "version = {9.9.9}")
    assert _bibtex_fields(text)["version"] == "9.9.9" != str(load_cff()["version"])


# ---------------------------------------------------------------- licence files

def test_root_licence_files_hold_the_full_texts():
    mit = (ROOT / CODE_LICENCE).read_text(encoding="utf-8")
    assert mit.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in mit
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in mit
    for part in ("copylib", "tests", "benchmarks", CONTENT_LICENCE):
        assert part in mit, f"LICENSE does not name {part}"
    cc = (ROOT / CONTENT_LICENCE).read_bytes()
    assert hashlib.sha256(cc).hexdigest() == CC_BY_4_0_SHA256, \
        "LICENSE-CC-BY-4.0 is not the unmodified CC BY 4.0 legal code"


def test_licences_are_named_in_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Licence\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
    assert section, "README.md has no '## Licence' section"
    for name in (CODE_LICENCE, CONTENT_LICENCE, "CITATION.cff", "MIT", "CC BY 4.0", PAPER_URL):
        assert name in section.group(1), f"README's Licence section does not name {name}"


def test_licences_are_named_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = tomllib.loads(text)
    assert pyproject["project"]["license"] == "MIT"
    assert CODE_LICENCE in pyproject["project"]["license-files"]
    assert CONTENT_LICENCE in text
    # PEP 639 metadata needs setuptools >= 77.
    requires = " ".join(pyproject["build-system"]["requires"])
    version = re.search(r"setuptools>=(\d+)", requires)
    assert version and int(version.group(1)) >= 77, requires


def _footer() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["html"]["extra_footer"]


def test_footer_names_both_licences_and_the_paper():
    footer = _footer()
    for needed in ("MIT", CODE_LICENCE, "CC BY 4.0", CONTENT_LICENCE, CC_BY_URL, PAPER_URL, "Lavie"):
        assert needed in footer, f"the footer does not mention {needed}"


def test_built_pages_carry_the_footer(built_site):
    """Every page of the built site shows the footer (uses the session's book build)."""
    footer_link = f'href="{CC_BY_URL}"'
    pages = [p for p in built_site.rglob("*.html")
             if not p.relative_to(built_site).parts[0].startswith("_")]
    content = [p for p in pages if "bd-footer" in p.read_text(encoding="utf-8")]
    assert len(content) >= 10, f"only {len(content)} themed pages in {built_site}"
    missing = [str(p.relative_to(built_site)) for p in content
               if 'class="extra_footer"' not in (t := p.read_text(encoding="utf-8")) or footer_link not in t]
    assert not missing, f"pages without the licence footer: {missing}"


# ---------------------------------------------------------------- attribution

ATTRIBUTION = ("Phase Transitions in Attention: A Bayesian Theory of Copy Head Emergence",
               "Lavie", "Fischer", "Lekov", "Van Maele", "Ringel", "Helias",
               PAPER_URL, CC_BY_URL, "CC BY 4.0", "not reviewed or endorsed")
CHANGES = (r"M^\ast", r"\sigma^2 = \sigma_0^2 L", "integrated out", "re-derives",
           "beyond the saddle point", "posterior sampling", "scaling", "predictability", "causal")


@pytest.mark.parametrize("page, needed", [(INTRO, ATTRIBUTION), (ABOUT, ATTRIBUTION + CHANGES)],
                         ids=["intro", "about"])
def test_pages_attribute_the_paper(page, needed):
    text = " ".join(page.read_text(encoding="utf-8").split())
    for phrase in needed:
        assert phrase in text, f"{page.name} does not mention {phrase!r}"


def test_the_introduction_points_to_the_changes_and_licences():
    assert "{doc}`about`" in INTRO.read_text(encoding="utf-8")


def test_about_page_has_the_licences_and_the_citation():
    about = ABOUT.read_text(encoding="utf-8")
    assert "## Licences" in about and "(licence-and-citation)=\n## How to cite" in about
    assert CODE_LICENCE in about and CONTENT_LICENCE in about


def test_about_page_is_plain_text_in_the_toc():
    assert not ABOUT.read_text(encoding="utf-8").startswith("---"), "the About page must not be a notebook"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert "book/about" in [c["file"] for c in toc["chapters"]]


# ---------------------------------------------------------------- third-party files

LICENCE_NAME = re.compile(r"^(LICEN[CS]E|COPYING)([-._].*)?$", re.I)


def test_every_vendored_package_ships_a_licence_file():
    site = ROOT / "vendor" / "site"
    packages = sorted(p for p in site.iterdir() if p.is_dir())
    assert {p.name for p in packages} >= {"mathjax", "widgets"}
    unlicensed = [p.name for p in packages
                  if not any(LICENCE_NAME.match(f.name) for f in p.iterdir() if f.is_file())]
    assert not unlicensed, f"vendored folders without a LICENSE/LICENCE/COPYING file: {unlicensed}"


def test_vendored_fonts_ship_their_licence():
    widgets = ROOT / "vendor" / "site" / "widgets"
    if any(widgets.glob("*.woff*")):
        text = (widgets / "LICENSE-fontawesome.txt").read_text(encoding="utf-8")
        assert "SIL OFL 1.1" in text
    bsd = (widgets / "LICENSE").read_text(encoding="utf-8")
    assert "Redistribution and use in source and binary forms" in bsd  # the html-manager's BSD-3-Clause


def test_cff_schema_records_its_origin_and_licence():
    readme = (ROOT / "tests" / "data" / "README.md").read_text(encoding="utf-8")
    assert "citation-file-format/citation-file-format" in readme
    assert "CC BY 4.0" in readme
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() in readme


def test_new_root_files_stay_out_of_the_book():
    """Root Markdown files other than the book's are excluded from the build; tests/ (with
    tests/data/) is excluded as a whole."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    excluded = set(config["exclude_patterns"])
    assert "tests" in excluded
    root_md = {p.name for p in ROOT.glob("*.md")}
    assert root_md <= excluded, f"root Markdown files not in exclude_patterns: {root_md - excluded}"
