/* Site search without raw TeX in what it shows.

   Sphinx's search page (searchtools.js) shows, under each result, a snippet cut from the text
   of the page it links to (Search.htmlToText: the text of the page's main block). There a
   formula is still its TeX source, so snippets read "\(P_3 \sim L \ln^2 L\)". The titles of
   sections come from the search index (searchindex.js), where a formula in a heading is its
   TeX source too ("P_3 \sim L \ln^2 L").

   On the search page this script makes both plain text before the first query runs: every
   formula of a fetched page (span.math, div.math) is replaced by texToText(its source)
   before Sphinx's own htmlToText reads the page, and the section titles of the index are
   rewritten with texToText. texToText keeps what a reader can read without TeX: Greek
   letters and common symbols as Unicode characters, digit sub- and superscripts as Unicode
   sub- and superscripts ("P₃ ∼ L ln² L"), the argument of a font or accent command, a/b for
   a fraction, and drops the rest of the markup. tests/book/test_math_browser.py checks the
   conversion and the snippets of the built site. */
(function () {
  "use strict";

  const SYMBOLS = {
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", zeta: "ζ", eta: "η",
    theta: "θ", vartheta: "ϑ", iota: "ι", kappa: "κ", lambda: "λ", mu: "μ", nu: "ν", xi: "ξ", pi: "π",
    rho: "ρ", varrho: "ϱ", sigma: "σ", varsigma: "ς", tau: "τ", upsilon: "υ", phi: "ϕ", varphi: "φ",
    chi: "χ", psi: "ψ", omega: "ω", Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ", Xi: "Ξ", Pi: "Π",
    Sigma: "Σ", Upsilon: "Υ", Phi: "Φ", Psi: "Ψ", Omega: "Ω",
    le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", approx: "≈", sim: "∼", simeq: "≃",
    cong: "≅", equiv: "≡", propto: "∝", ll: "≪", gg: "≫", lesssim: "≲", gtrsim: "≳", times: "×",
    cdot: "·", cdots: "⋯", ldots: "…", dots: "…", pm: "±", mp: "∓", infty: "∞", to: "→",
    rightarrow: "→", leftarrow: "←", Rightarrow: "⇒", Leftrightarrow: "⇔", mapsto: "↦", in: "∈",
    notin: "∉", subset: "⊂", subseteq: "⊆", partial: "∂", nabla: "∇", sum: "∑", prod: "∏", int: "∫",
    langle: "⟨", rangle: "⟩", lvert: "|", rvert: "|", vert: "|", mid: "|", lVert: "‖", rVert: "‖",
    Vert: "‖", top: "⊤", intercal: "⊤", ell: "ℓ", star: "⋆", ast: "∗", circ: "∘", forall: "∀",
    exists: "∃", cup: "∪", cap: "∩", emptyset: "∅", varnothing: "∅", prime: "′", dagger: "†",
    lfloor: "⌊", rfloor: "⌋", lceil: "⌈", rceil: "⌉", odot: "⊙", otimes: "⊗", oplus: "⊕",
    setminus: "∖", land: "∧", lor: "∨", neg: "¬", hbar: "ℏ", Re: "ℜ", Im: "ℑ",
  };
  // Markup with nothing to show: sizes, spacing, layout.
  const DROP = new Set(["rm", "bf", "it", "cal", "sf", "tt", "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
    "biggl", "biggr", "middle", "displaystyle", "textstyle", "scriptstyle", "limits", "nolimits",
    "nonumber", "notag", "quad", "qquad", "hfill", "qed", "boxed", "phantom", "hphantom", "vphantom"]);
  // Commands whose braced argument is the text: fonts, accents, operator names, labels.
  const KEEP_ARGUMENT = "mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|mathfrak|mathscr|boldsymbol|bm|"
    + "text|textrm|textit|textbf|textsf|texttt|mbox|operatorname|hat|widehat|bar|overline|tilde|widetilde|"
    + "vec|dot|ddot|check|breve|acute|grave|underline|overbrace|underbrace|mathring|boxed";
  const ESCAPED = "{}%_#&$^";
  const OPEN = "\ue010", CLOSE = "\ue011";
  const SUB = { "0": "₀", "1": "₁", "2": "₂", "3": "₃", "4": "₄", "5": "₅", "6": "₆", "7": "₇", "8": "₈",
    "9": "₉", "+": "₊", "-": "₋", "=": "₌", "(": "₍", ")": "₎" };
  const SUP = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸",
    "9": "⁹", "+": "⁺", "-": "⁻", "=": "⁼", "(": "⁽", ")": "⁾", "n": "ⁿ", "i": "ⁱ", "T": "ᵀ",
    "∗": "*", "*": "*", "′": "′" };

  function script(marker, body, table) {
    const chars = [...body.trim()];
    if (chars.length && chars.every((c) => c in table)) return chars.map((c) => table[c]).join("");
    // Brackets that later passes do not take for markup (restored at the end).
    return marker + (chars.length > 1 ? OPEN + body.trim() + CLOSE : body.trim());
  }

  function texToText(tex) {
    let t = String(tex).trim();
    // Delimiters: \( \) \[ \] $ $$
    t = t.replace(/^\\\(|\\\)$/g, "").replace(/^\\\[|\\\]$/g, "").replace(/^\$\$?|\$\$?$/g, "");
    t = t.replace(/\\(begin|end)\{[^{}]*\}(\{[^{}]*\})?/g, " ");
    t = t.replace(/\\(label|tag|ref|eqref)\{[^{}]*\}/g, "");
    // Escaped characters stand for themselves: kept aside until the markup is gone.
    t = t.replace(/\\([{}%_#&$^])/g, (m, c) => String.fromCharCode(0xe000 + ESCAPED.indexOf(c)));
    t = t.replace(/\\[,;:! ]/g, " ").replace(/~/g, " ").replace(/\\\\/g, " ").replace(/&/g, " ");
    // Innermost braces first, so nested arguments resolve from the inside out.
    const simple = (s) => /^[\w.\u0080-\uffff]+$/.test(s.trim()) ? s.trim() : "(" + s.trim() + ")";
    for (let i = 0; i < 10; i++) {
      const before = t;
      t = t.replace(new RegExp(`\\\\(?:${KEEP_ARGUMENT})\\s*\\{([^{}]*)\\}`, "g"), "{$1}");
      t = t.replace(/\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, (m, a, b) => `{${simple(a)}/${simple(b)}}`);
      t = t.replace(/\\sqrt\s*\{([^{}]*)\}/g, (m, a) => `{√${simple(a)}}`);
      t = t.replace(/\\([A-Za-z]+)/g, (m, name) => (name in SYMBOLS ? SYMBOLS[name] : m));
      t = t.replace(/_\s*\{([^{}]*)\}/g, (m, a) => script("_", a, SUB));
      t = t.replace(/\^\s*\{([^{}]*)\}/g, (m, a) => script("^", a, SUP));
      t = t.replace(/\{([^{}]*)\}/g, "$1");
      if (t === before) break;
    }
    // Any other command is shown by its name (\ln, \exp, \max, \Tr), a space before a following letter.
    t = t.replace(/\\([A-Za-z]+)\s*/g, (m, name, offset, all) => {
      if (DROP.has(name)) return " ";
      const before = /[A-Za-z0-9)\]}/\ue011]/.test(all.charAt(offset - 1)) ? " " : "";
      return before + name + (/[A-Za-z0-9\\]/.test(all.charAt(offset + m.length)) ? " " : "");
    });
    t = t.replace(/_([^\s_^])/g, (m, a) => script("_", a, SUB));
    t = t.replace(/\^([^\s_^])/g, (m, a) => script("^", a, SUP));
    t = t.replace(/[\\{}]/g, "").replace(/[\ue000-\ue007]/g, (c) => ESCAPED[c.charCodeAt(0) - 0xe000])
      .replace(/\ue010/g, "(").replace(/\ue011/g, ")");
    return t.replace(/\s+/g, " ").replace(/\s+([,.;:)\]])/g, "$1").replace(/([(\[])\s+/g, "$1").trim();
  }

  /* The page's HTML with every formula as plain text (and without equation numbers). */
  function plainMathHtml(htmlString) {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    const formulas = doc.querySelectorAll("span.math, div.math");
    if (!formulas.length) return htmlString;
    for (const el of formulas) {
      el.querySelectorAll(".eqno").forEach((n) => n.remove());
      const text = texToText(el.textContent);
      el.replaceWith(doc.createTextNode(el.tagName === "DIV" ? ` ${text} ` : text));
    }
    return doc.documentElement.outerHTML;
  }

  function plainTitles(index) {
    if (!index || !index.alltitles) return;
    const titles = {};
    for (const [title, places] of Object.entries(index.alltitles)) {
      const plain = /[\\_^{}$]/.test(title) ? texToText(title) : title;
      titles[plain] = (titles[plain] || []).concat(places);
    }
    index.alltitles = titles;
    if (Array.isArray(index.titles)) {
      index.titles = index.titles.map((title) => (/[\\_^{}$]/.test(title) ? texToText(title) : title));
    }
  }

  function install() {
    // Sphinx declares `const Search` in searchtools.js: a global binding, not a property of window.
    if (typeof Search === "undefined" || Search.copyheadPlain) return;
    Search.copyheadPlain = true;
    const htmlToText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => htmlToText(plainMathHtml(htmlString), anchor);
    plainTitles(Search._index);
    const setIndex = Search.setIndex;
    Search.setIndex = (index) => {
      plainTitles(index);
      return setIndex(index);
    };
  }

  window.copyheadSearch = { texToText, plainMathHtml };
  // This script comes before searchtools.js and searchindex.js; Search.init runs on DOMContentLoaded,
  // after this listener (listeners run in the order they were added).
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", install);
  else install();
})();
