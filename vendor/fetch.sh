#!/usr/bin/env bash
# Re-creates vendor/site/ (MathJax and the Jupyter widgets HTML manager, served
# by the book itself so pages typeset math and render widgets without network)
# from the npm registry, at exact versions, and rewrites vendor/MANIFEST.sha256.
# tests/test_vendor.py checks the committed files against that manifest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
MATHJAX=mathjax@3.2.2
WIDGETS=@jupyter-widgets/html-manager@1.0.15
# Only for its licence file: embed.js bundles the Font Awesome Free webfonts.
FONTAWESOME=@fortawesome/fontawesome-free@5.15.4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$MATHJAX" "$WIDGETS" "$FONTAWESOME" >/dev/null)
mkdir -p "$work/mathjax" "$work/widgets" "$work/fontawesome"
tar xzf "$work"/mathjax-3.2.2.tgz -C "$work/mathjax"
tar xzf "$work"/jupyter-widgets-html-manager-1.0.15.tgz -C "$work/widgets"
tar xzf "$work"/fortawesome-fontawesome-free-5.15.4.tgz -C "$work/fontawesome"
rm -rf site && mkdir -p site/mathjax/input/tex site/mathjax/output/chtml/fonts site/widgets
m="$work/mathjax/package"
cp "$m/LICENSE" "$m/es5/tex-chtml.js" site/mathjax/
# TeX packages that tex-chtml.js autoloads on first use (\boldsymbol, \cancel, ...)
cp -r "$m/es5/input/tex/extensions" site/mathjax/input/tex/
cp -r "$m/es5/output/chtml/fonts/woff-v2" site/mathjax/output/chtml/fonts/
w="$work/widgets/package/dist"
# embed.js is the standalone build (no RequireJS): the standard controls only,
# which is all the book's explorers use. Its fonts are found next to it.
cp "$w/embed.js" "$w/embed.js.LICENSE.txt" "$w"/*.woff2 "$w"/*.woff site/widgets/
# Third-party files keep their licences. The html-manager's tarball has no licence
# file (package.json: BSD-3-Clause), so its text is kept in licenses/ (see the
# README there); the fonts are Font Awesome Free's webfonts (SIL OFL 1.1), checked
# byte for byte against that package before its LICENSE.txt is copied.
cp licenses/jupyter-widgets-html-manager.LICENSE site/widgets/LICENSE
for font in "$w"/*.woff2 "$w"/*.woff; do
  found=no
  for fa in "$work"/fontawesome/package/webfonts/*; do
    if cmp -s "$font" "$fa"; then found=yes; fi
  done
  if [ "$found" != yes ]; then
    echo "$font is not a Font Awesome Free 5.15.4 webfont: check its licence" >&2
    exit 1
  fi
done
cp "$work/fontawesome/package/LICENSE.txt" site/widgets/LICENSE-fontawesome.txt
(cd site && find . -type f | LC_ALL=C sort | xargs sha256sum) > MANIFEST.sha256
echo "vendored $MATHJAX and $WIDGETS (with the licence of $FONTAWESOME) into vendor/site ($(du -sh site | cut -f1))"
