#!/usr/bin/env bash
# Re-creates vendor/site/ (MathJax and the Jupyter widgets HTML manager, served
# by the book itself so pages typeset math and render widgets without network)
# from the npm registry, at exact versions, and rewrites vendor/MANIFEST.sha256.
# tests/test_vendor.py checks the committed files against that manifest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
MATHJAX=mathjax@3.2.2
WIDGETS=@jupyter-widgets/html-manager@1.0.15
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$MATHJAX" "$WIDGETS" >/dev/null)
mkdir -p "$work/mathjax" "$work/widgets"
tar xzf "$work"/mathjax-3.2.2.tgz -C "$work/mathjax"
tar xzf "$work"/jupyter-widgets-html-manager-1.0.15.tgz -C "$work/widgets"
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
(cd site && find . -type f | LC_ALL=C sort | xargs sha256sum) > MANIFEST.sha256
echo "vendored $MATHJAX and $WIDGETS into vendor/site ($(du -sh site | cut -f1))"
