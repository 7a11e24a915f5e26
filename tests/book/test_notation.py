"""The book's notation: one meaning per symbol (book/notation.md), checked on the sources.

What is checked mechanically:

* the notation page: every table row names a symbol once, links the page that
  introduces it, and every `copylib` name it gives exists (``cl.a.b`` is
  imported attribute by attribute, ``spec.x`` is read from a ``ModelSpec``);
* every page of the book (prose, math, figure captions and the TeX of figure
  labels): the cyclic shift is $T$, never $S$ (no ``S_{l,l-1}``, ``S - J/L``,
  ``\\Delta S``, ``\\langle S, S\\rangle``, "the shift $S$", ...); $U$ is only the
  potential $U(g, b, W)$ of the network parameters (no ``U(c)``, no ``U = ...``
  and no ``U^\\top`` as a generic matrix); positions are numbered from 1 in
  prose and math (no "position 0", no ``T_{0m}``, no ``l = 0``);
* one meaning each for $F$, $\\rho$, $s$, $c_L$: $F$ is only the network output
  (the reduced action is ``S_v(\\Delta)``, its data part ``S^{\\rm data}_v``; the
  basin free energies are ``\\Omega_{\\rm pool}``, ``\\Omega_{\\rm copy}``: no
  ``F_v``, ``F_{\\rm pool}``, ``F(\\Delta)``, ``F'``); $\\rho$ is only the linear
  chapter's transverse weight (no step concentration, shell ratio, collision sum or
  correlation matrix $\\rho$, and no $\\rho$ outside the pages that use the
  transverse weight); no unsubscripted $s$ for the copy-channel ratio or the data
  gain (``S_{\\rm copy}(s)``, ``s(\\Delta)``); $c_L$ is not the isotropic row-sum
  share (``\\xi_L``), only the causal copy weight of row $L$;
* plain $s$ is only the copy share (the spinodal exercise's distance is
  ``x_+ - x_-``, the saddlepoint statistic ``\\Theta``); $H$ is only the Hessian
  of $S(m, q)$ (``H_L``, ``H_\\varphi`` aside; a refinement interval's width is
  ``\\tau``); $Z$ is only the partition function of the glossary (and the
  Woodbury exercise's generic matrix): the transverse parts are ``A_{\\rm row}``,
  ``A_{\\rm rest}``.
* no borrowed letters: $m$ is not a position (``T_{1m}``), $c$ not a fit's
  intercept, $g_1, g_2$ not skewness and kurtosis, ``N(0, .)`` is ``\\mathcal N``,
  and position 1's output is $f_1$ (not $f_0$).
* the last double meanings: the previous-occurrence map is ``\\operatorname{prev}(l)``
  ($p$ is a density); $f$ is only the output (no ``f(t)``, ``\\hat f``, ``f(u, v)``,
  ``f_c``); $h$ is only layer 1's output $h_j$ (no ``h = 1/\\operatorname{Var}``,
  ``h(\\varepsilon)``); $B$ is only the data moment (the spinodal depth is
  ``S_{\\rm b}``); $b$ is only the bias and $e$ only Euler's number (no fitted
  exponent ``L^b``, no ``P^2 - bP - e``, no ``b = S'''``, no ``a I_V + b J_V``);
  no generic matrices $M$, $N$ (the token moment's matrix is $\\Pi$); $\\delta$ is
  Kronecker's or an exercise's own (no ``\\delta_{\\rm theory}``, no hysteresis
  $\\delta$).

The detectors are tested on strings first, so that the legitimate uses (the
actions ``S(m, q)``, ``S(\\Delta)``, ``S_v``, ``S_\\perp``, ``S - \\min S``, the
potential ``U(g, b, W)``, ``G_0``, ``\\sigma_0^2``) are known not to be flagged.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import copylib
from copylib import ModelSpec

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
NOTATION = BOOK / "notation.md"
PAGES = sorted(BOOK.glob("*.md"))

# --------------------------------------------------------------------------
# reading a page: prose, math and code apart
# --------------------------------------------------------------------------

FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\{([\w-]+)\})?")
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$([^$\n]+?)\$")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def split_page(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``(prose lines, code lines)`` of a MyST page as ``(line number, text)``.

    Code is the body of ``{code-cell}`` blocks; their option lines (``:mystnb:``
    figure captions and alt text, read by the reader) count as prose. The body
    of ``{math}`` blocks is wrapped in ``$$`` so that it reads as display math.
    """
    prose, code = [], []
    kind = None  # None, "code-cell" or "math": the block we are in
    closing = ""
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        fence = FENCE.match(stripped)
        if kind is None and fence and fence.group(3) in ("code-cell", "math"):
            kind, closing = fence.group(3), fence.group(1)
            if kind == "math":
                prose.append((n, "$$"))
            continue
        if kind is not None and stripped == closing:
            if kind == "math":
                prose.append((n, "$$"))
            kind = None
            continue
        if kind == "code-cell" and not stripped.startswith(":"):
            code.append((n, line))
        elif kind == "math" and stripped.startswith(":"):
            continue  # :label: of a math block
        else:
            prose.append((n, line))
    return prose, code


def math_segments(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Every ``$...$`` and ``$$...$$`` segment of ``lines`` with the line it starts on."""
    text = "\n".join(line for _, line in lines)
    starts = [n for n, _ in lines]
    offsets = [0]
    for _, line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def line_of(pos: int) -> int:
        lo = max(i for i, off in enumerate(offsets[:-1]) if off <= pos)
        return starts[lo]

    text = INLINE_CODE.sub(lambda m: " " * len(m.group()), text)
    found = [(line_of(m.start()), m.group(1)) for m in DISPLAY_MATH.finditer(text)]
    rest = DISPLAY_MATH.sub(lambda m: " " * len(m.group()), text)
    found += [(line_of(m.start()), m.group(1)) for m in INLINE_MATH.finditer(rest)]
    return found


def prose_text(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Prose lines without inline code (code names may use any letters)."""
    return [(n, INLINE_CODE.sub(" ", line)) for n, line in lines]


def code_math(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """TeX inside the strings of code cells (figure labels and titles the reader sees)."""
    return [(n, m.group(1)) for n, line in lines for m in INLINE_MATH.finditer(line)]


# --------------------------------------------------------------------------
# the detectors
# --------------------------------------------------------------------------

NOT_NAME = r"(?<![\\A-Za-z])"  # a standalone letter, not part of a word or a TeX command
SHIFT_AS_S_MATH = [
    re.compile(NOT_NAME + r"S\s*-\s*(\\frac\s*\{?\s*)?J"),  # S - J/L, S - \frac JL
    re.compile(NOT_NAME + r"S_(\{\s*)?[lijk0-9](?![a-zA-Z])"),  # S_{l,l-1}, S_{ij}, S_l (not S_v, S_\perp)
    re.compile(NOT_NAME + r"S_\{[lijk0-9][lijk0-9,\s+-]*\}"),
    re.compile(r"\\Delta\s*(\\[,;:!]\s*)?S(?![A-Za-z_(])"),  # \Delta S, \Delta\,S
    re.compile(r"\\langle\s*S\s*,|,\s*S\s*\\rangle"),  # <S, S>, <J, S>
    re.compile(r"\(\s*J\s*,\s*S\s*\)"),  # span(J, S)
    re.compile(r"(?<![\w.^_{])[0-9.]+\s*(\\,)?\s*S(?![A-Za-z_(])"),  # 0.6\,S
    re.compile(NOT_NAME + r"S\s*\^\s*\{?\s*(\\top|T\b)"),  # S^\top
    re.compile(NOT_NAME + r"S\s*(\\mathbf\s*\{?\s*1|X\b)"),  # S 1, S X
    re.compile(r"=\s*S\s*$"),  # A = S
]
SHIFT_AS_S_PROSE = re.compile(r"(shift|shift matrix|copy pattern|orthogonal to|and to|\$J\$ and)\s+\$S\$", re.I)

U_MISUSE_MATH = [
    re.compile(NOT_NAME + r"U\s*\(\s*(c|\\Delta|y)\b"),  # U(c), U(\Delta): the marginal potential is Omega
    re.compile(NOT_NAME + r"U\s*="),  # U = (S - J/L)/..., U = \Phi: U is not a generic matrix
    re.compile(NOT_NAME + r"U\s*\^\s*\{?\s*\\top|UU"),  # Woodbury's U
]
U_MISUSE_PROSE = re.compile(r"((minima|minimum|shoulder) of|potential)\s+\$U\$|\$U\$\s+(has|becomes)", re.I)

ZERO_POSITION_PROSE = re.compile(r"\b(position|row)s?\s+\$?0\$?(?![.\d])", re.I)
NOT_INDEX = r"(?<![\\A-Za-z_^])"  # nor an index of another symbol (w_l = 0 is not l = 0)
ZERO_POSITION_MATH = [
    re.compile(NOT_INDEX + r"[TXYxy]_\{?\s*0(?![.\d])"),  # T_{0m}, x_0: position indices start at 1
    re.compile(NOT_INDEX + r"l\s*=\s*0(?![.\d])"),  # l = 0, ..., L-1
]

# F is the network output F^mu only: the reduced action is S, the basin free energies Omega
F_MISUSE_MATH = [
    re.compile(NOT_NAME + r"F_(\{\s*)?(v\b|b\b|\\rm|\\text|\\mathrm)"),  # F_v, F_b, F_{\rm pool}, F_{\rm map}
    re.compile(NOT_NAME + r"F\s*'"),  # F', F''
    re.compile(NOT_NAME + r"F\s*\(\s*(\\Delta|x_|0\s*\))"),  # F(\Delta), F(x_-), F(0)
    re.compile(r"\\min\s*F(?![A-Za-z])"),  # \min F
    re.compile(NOT_NAME + r"F\s*(\\approx|=)"),  # F \approx ..., F = -G_0 ...
    re.compile(r"\\sigma_G\^2\s*F(?![A-Za-z^])"),  # \sigma_G^2 F
]
# rho is the linear chapter's transverse weight only
RHO_MISUSE_MATH = [
    re.compile(r"\\rho\s*=\s*\\frac\s*\{\s*\\tanh"),  # step concentration
    re.compile(r"\\rho\s*=\s*r\^2\s*/\s*\(\s*n"),  # shell ratio r^2/(n s_c^2)
    re.compile(r"\\ln\s*\\rho"),  # the shell's entropy term
    re.compile(r"\\rho\s*=\s*\\sum"),  # collision sum of the other logits
    re.compile(r"\\rho\s*\^\s*\{?\s*j"),  # its tilted moments
    re.compile(r"\\rho_\{?\s*ij"),  # correlation matrix of the z's
    re.compile(r"\\hat\s*\{?\s*\\rho"),
]
RHO_PAGES = {"linear_attention", "conventions", "scaling", "notation"}  # where the transverse weight appears
# no unsubscripted s for the copy-channel ratio (Upsilon) or the data gain (Gamma)
S_LOWER_MISUSE_MATH = [
    re.compile(NOT_NAME + r"s\s*\(\s*\\Delta"),  # s(\Delta), the data gain
    re.compile(NOT_NAME + r"s\s*=\s*(Q\^2|\\gamma_1\^2)"),
    re.compile(r"S_\{\s*\\(text|rm)\s*\{?\s*copy\s*\}?\s*\}\s*\(\s*s\s*\)"),  # S_{copy}(s)
    re.compile(r"\\mathcal\s*G\s*\\,\s*s(?![A-Za-z_])"),
    # the spinodal exercise's distance is x_+ - x_-, the saddlepoint statistic Theta
    re.compile(r"\\frac\s*\{S'''\}\s*\{12\}\s*(\\,)?\s*s\s*\^"),  # \frac{S'''}{12}\,s^3
    re.compile(NOT_NAME + r"s\s*=\s*(2x_|\(\s*\\alpha_1|L\s*\\nabla)"),  # s = 2x_+, s = (alpha_1, gamma_1)
    re.compile(r"p_0\s*\(\s*s\s*\)|\\lambda\s*(\\cdot|\\mapsto)\s*s(?![A-Za-z_])"),  # p_0(s), lambda . s
    re.compile(r"f'\s*\(\s*s\s*\)"),  # an integration variable s
]
# c is the copy weight (c_l its causal row value): the isotropic row-sum share is xi_L
C_L_MISUSE_MATH = [re.compile(r"c_L\s*(r\b|r\^|r_0|=\s*L\s*\()")]
# H is the Hessian of S(m, q) (H_L, H_varphi subscripted): a refinement interval's width in ln P is tau
H_MISUSE_MATH = [
    re.compile(NOT_NAME + r"H\s*/|\\frac\s*\{\s*H\s*\}"),  # H/(2k), \frac{H}{4kw}
    re.compile(NOT_NAME + r"H_2(?![0-9])"),
]
# Z is the partition function (and the Woodbury exercise's generic matrix): the transverse parts are A_row, A_rest
Z_MISUSE_MATH = [
    re.compile(r"A_\\perp\s*=\s*R\s*\+\s*Z"),
    re.compile(NOT_NAME + r"R\s*\\mathbf\s*\{?\s*1|\\lVert\s*R\s*\\rVert"),  # R 1, |R|
]
Z_PAGES = {"glossary", "induction_head", "notation"}  # the partition function (induction: of a restricted rung)
# letters that were borrowed for something else: m as a position (positions are l, j, k), c as a fit's intercept
# or constant (c is the copy weight), g_1, g_2 as skewness and kurtosis (g are the logits), N(0, .) for the
# normal law (\mathcal N), f_0 for position 1's output
BORROWED_MATH = [
    re.compile(r"T_\{\s*[1lijk]\s*m\s*\}|" + NOT_NAME + r"l\s*=\s*m(?![A-Za-z_])"),  # T_{1m}, a pair l = m
    re.compile(NOT_NAME + r"c\s*\+\s*[ab]\s*\\ln|\(\s*a\s*,\s*c\s*\)|" + NOT_NAME + r"c\s*\\mathbf\s*\{?\s*1"),
    re.compile(NOT_NAME + r"g_[12](?![0-9])"),
    re.compile(r"(?<!\\mathcal )(?<!\\mathcal)" + NOT_NAME + r"N\s*\(\s*0"),
    re.compile(r"\\lVert\s*f_0"),
]
# S^data_v is the data part; S_v(...) takes the gap
S_DATA_MISUSE_MATH = [re.compile(NOT_NAME + r"S_v\s*(\\big)?\(\s*\\alpha")]
DEPTH_AS_B_PROSE = re.compile(r"depth\s+\$B\$|\$B\$\s+through")
# the last letters with two meanings: each pattern is an old use that was renamed
DOUBLE_MEANING_MATH = {
    # p is a density: the previous-occurrence map is \operatorname{prev}(l)
    "prev": [re.compile(NOT_NAME + r"p\s*\(\s*l\s*\)|x_\{\s*p\s*\(")],
    # f is the network output: ln(pi) is vartheta, one row's density p_row, conventions' P_c = sigma_0^2 \mathcal P_c
    "f": [re.compile(NOT_NAME + r"f\s*\(\s*(t\b|t_|u\s*,|\\tilde)"), re.compile(r"\\hat\s*\{?\s*f(?![A-Za-z])"),
          re.compile(NOT_NAME + r"f_c(?![A-Za-z])"), re.compile(NOT_NAME + r"f\s*'")],
    # h is layer 1's output h_j: 1/Var is \mathcal I, the ridge exercise's advantage \mathcal A(eps)
    "h": [re.compile(NOT_NAME + r"h\s*(=|\()"), re.compile(r"\{\s*d(\^\{?2\}?)?\s*h\s*\}")],
    # B is the data moment: the depth of the copy minimum is S_b
    "B": [re.compile(NOT_NAME + r"B\s*&?=\s*S\s*\(|" + NOT_NAME + r"B\s*(\\propto|\\sim)")],
    # b is the bias, e is Euler's number: the local constants have other names
    "b": [re.compile(NOT_NAME + r"b\s*=\s*S'''|\\frac\s*\{\s*2?b\s*\}\s*\{\s*[23]\s*\}"),
          re.compile(r"L\^\{?\s*b(?![A-Za-z])|" + NOT_NAME + r"b\s*\\ln\s*L"),  # a fitted exponent of L
          re.compile(NOT_NAME + r"b\s*(\\,)?\s*J_V|a\s*\+\s*Vb"),  # a I_V + b J_V
          re.compile(NOT_NAME + r"b\s*(\\,)?\s*P(?![A-Za-z_])|P_0\s*=\s*b\s*/|x_b(?![A-Za-z])"),
          re.compile(NOT_NAME + r"e\s*/\s*b|\\frac\s*\{\s*e\s*\}\s*\{\s*b|\\sqrt\s*\{\s*b\^2|4e(?![A-Za-z])|-\s*e\s*&?\s*=\s*0"),
          re.compile(r"\+\s*b\s*u|\(P_\\ast\s*-\s*P\)\s*\+\s*b(?![A-Za-z])")],
    # M* is the model: the token moment's matrix is Pi, Woodbury needs no M, N
    "MN": [re.compile(r"X\^\\top\s*M\s*X|\\operatorname\{tr\}\s*M(?![A-Za-z^])|\\Phi\s*M\s*\\Phi"),
           re.compile(r"Z\s*N\s*Z|[MN]\^\{-1\}")],
    # delta is Kronecker's (or one exercise's own): no theory error delta_theory, no hysteresis delta
    "delta": [re.compile(r"\\delta_\{?\s*\\(rm|text)\s*\{?\s*theory|\\delta\^2\s*/\s*\(\s*3\s*\\sigma_c")],
}


def math_offences(segment: str, patterns) -> list[str]:
    return [m.group() for p in patterns for m in p.finditer(segment)]


def shift_as_s(math: str) -> list[str]:
    return math_offences(math, SHIFT_AS_S_MATH)


def u_misuse(math: str) -> list[str]:
    return math_offences(math, U_MISUSE_MATH)


def zero_position(math: str) -> list[str]:
    return math_offences(math, ZERO_POSITION_MATH)


def f_misuse(math: str) -> list[str]:
    return math_offences(math, F_MISUSE_MATH)


def rho_misuse(math: str) -> list[str]:
    return math_offences(math, RHO_MISUSE_MATH)


def s_misuse(math: str) -> list[str]:
    return math_offences(math, S_LOWER_MISUSE_MATH + C_L_MISUSE_MATH + S_DATA_MISUSE_MATH)


def h_misuse(math: str) -> list[str]:
    return math_offences(math, H_MISUSE_MATH)


def z_misuse(math: str) -> list[str]:
    return math_offences(math, Z_MISUSE_MATH)


def borrowed(math: str) -> list[str]:
    return math_offences(math, BORROWED_MATH)


def double_meaning(math: str) -> list[str]:
    return math_offences(math, [p for ps in DOUBLE_MEANING_MATH.values() for p in ps])


def any_z(math: str) -> list[str]:
    """Every standalone Z (on pages without the partition function, any Z is an old use)."""
    return re.findall(NOT_NAME + r"Z(?![A-Za-z])", math)


def any_rho(math: str) -> list[str]:
    """Every rho (on pages without the transverse weight, any rho is an old use)."""
    return re.findall(r"\\(?:var)?rho(?![A-Za-z])", math)


# --------------------------------------------------------------------------
# the detectors on strings: legitimate uses pass, the old ones are caught
# --------------------------------------------------------------------------

LEGIT_MATH = [
    r"S(m, q) ={}& \ell\Big[\tfrac{V(V-1)}2\ln\big(1+\tfrac{\alpha_1}\varepsilon\big)",
    r"S(\Delta)", r"S^{\rm data}_v(\alpha_1, L, \gamma_1, L; P)", r"S_\perp = \frac n2(\Lambda - 1 - \ln\Lambda)",
    r"\ln(1 + S - \min S)", r"e^{-S(m,q)}", r"S_{\rm copy} - S_{\rm pool}", r"S_{\text{data}}",
    r"\partial S/\partial\alpha_1", r"e^{-S}", r"S", r"T_{l,l-1} = 1", r"T_{1,L} = 1",
    r"A = m\,\frac JL + q\Big(T - \frac JL\Big) + A_\perp", r"\langle A, T - J/L\rangle",
    r"\Delta(T - J/L)", r"\operatorname{softmax}(\Delta T)", r"U(g, b, W) = \frac{1}{2\sigma^2}",
    r"\Omega(c) = -\ln p(c)", r"G_0 = P(V-1)/(2\sigma_0^2 V)", r"\sigma_0^2", r"\ell = 0", r"l = 1, \dots, L",
    r"x^\mu_{l-1}", r"\sum_l w_l = 0", r"p(Y|A_0)", r"s_p^2 = \sigma_b^2 + \sigma_G^2/L^2", r"\Delta_l", r"\Delta_{1/2} = \ln(L-1)",
    r"F^\mu = A\,X^\mu W", r"p(Y^\mu \mid F^\mu)", r"S_v(\Delta; P)", r"\Omega_{\rm pool} = \Omega_{\rm copy}",
    r"\Omega_{\rm basin} = -\ln\Pr(c \in \text{basin})", r"S_{\rm map}(\Delta; P)", r"S' = S'' = 0",
    r"S(\Delta) - \min S",
    r"\rho = r^2", r"P_2 = \sigma_0^2 L^2 V(\rho + \varepsilon)/((V-1)\sigma_G^2)", r"\rho \approx \sigma_G^2",
    r"\Upsilon = Q^2/(L(\rho+\varepsilon))", r"S_{\text{copy}}(\Upsilon)", r"-G_0\, \Gamma(\Delta)", r"s_c^2",
    r"\alpha_2 = Lm^2 + \xi_L r^2", r"c = 1/(1 + (L-1)e^{-\Delta})", r"c_L", r"c_l = \frac{1}{1 + (l-1)e^{-\Delta_l}}",
    r"\psi > 1/2", r"u = v^2 + \Psi\,(1 - v)^2", r"2\sum_{ij}\Xi_{ij}^2",
    r"s = 1/2", r"s = (L-1)\mathbb E[q\operatorname{sign}m]", r"s_{lj} = x_l^\top W_K h_j",
    r"&= \frac{S'''}{12}\,(x_+ - x_-)^3 \;\propto\; \delta^{3/2}.", r"x_+ - x_- = 2x_+ \propto \delta^{1/2}",
    r"p_0(\Theta) \simeq \frac{\exp[L\varphi(\lambda) - \lambda\cdot\Theta]}", r"\Theta = (\alpha_1, \gamma_1)",
    r"\lambda \mapsto \Theta", r"\int_{t_3}^{t}\big(\vartheta'(\tilde t) - k\big)\,d\tilde t",
    r"\psi = \frac{\tanh\big(\frac{\tau}{4kw}\big)}{\tanh\big(\frac{\tau}{4w}\big)}", r"a = \tau/(2k)", r"\tau_2",
    r"H_{mm} = 1/s_p^2 - aP_0^2(x + x^2)", r"(H^{-1})_{mm}", r"\det H(P) = 0", r"H_{mq}^2/H_{qq}", r"L - H_L",
    r"\sqrt{\det H_\varphi(\lambda)}", r"A_\perp = A_{\rm row} + A_{\rm rest}", r"A_{\rm row}\mathbf 1 \ne 0",
    r"\lVert A_\perp\mathbf 1\rVert^2", r"\lVert A_{\rm row}\rVert^2",
    r"T_{1j} = 0", r"j=k", r"(a, a_0) = (1, 0)", r"a\bar x + a_0\mathbf 1 - y",
    r"g_{ij}\sim\mathcal N(0,\sigma_G^2)", r"\mathcal N(0, s_c^2 I_n)", r"g, b \sim \mathcal N(0, 0.01^2)",
    r"\lVert f_1\rVert^2", r"\hat\vartheta(t) = k t + \hat\vartheta_0", r"c_l = \frac{1}{1 + (l-1)e^{-\Delta_l}}", r"\sigma_G^2",
    # the renamed double meanings: what replaced them, and the uses that stay
    r"y_l = x_{\operatorname{prev}(l)+1}", r"p(Y \mid A)", r"p_0(\alpha_1, \gamma_1)", r"p_{\rm row}(u, v)",
    r"f_l = \sum_{2 \le j \le l} A^{(2)}_{lj}\, x_j^\top W", r"f^\mu_l - y^\mu_l", r"\vartheta(t) = \ln\pi",
    r"P_c = \sigma_0^2\, \mathcal P_c(L, V; \sigma_G, \sigma_b, \omega)", r"h_1 = x_1", r"x_l^\top W_K h_j",
    r"\partial g^{(2)}_{lj}/\partial g = x_l^\top W_K\, \partial h_j/\partial g = 0",
    r"\mathcal I = \frac{1}{\operatorname{Var}} = \frac{u}{a + v_0u}", r"\frac{d\mathcal A}{d\varepsilon}",
    r"B = \Phi^\top Y", r"B = \sum_\mu X^{\mu\top}A^\top T X^\mu", r"\operatorname{tr}\big(B^\top(K + \kappa I_V)^{-1}B\big)",
    r"S_{\rm b} &= S(x_-) - S(x_+) = 2|a|\delta\,x_+ - \frac{a_3}{3}x_+^3", r"a_3 = S'''",
    r"G = bJ + g", r"G &= b\,J + g", r"m = b + \bar g", r"S(-g, -b) = S(g, b)", r"\frac{b^2}{2\sigma_b^2}",
    r"\ln P_1 = a_0 + a\ln V + x\ln L", r"P_1 \propto V^{a}L^{x}", r"a_I\,I_V + a_J\,J_V", r"a_I + Va_J",
    r"H_{mm}(P) &= \frac1{s_p^2} + a_1P - a_2P^2", r"P_0 = a_1/a_2",
    r"P^2 - P_\rho P - P_\varepsilon^2 &= 0", r"P_2 = \tfrac12\big(P_\rho + \sqrt{P_\rho^2 + 4P_\varepsilon^2}\big)",
    r"x_\rho = d\ln P_\rho/d\ln L", r"e^{-S(m,q)}", r"e_{l-1}", r"l - 1 < e^{\Delta} = e^2 \approx 7.39",
    r"\mathbb E[X^\top \Pi X] = \frac{\operatorname{tr}\Pi}{V} I", r"\int e^{-N S(x)}dx", r"N \to \infty",
    r"(I_n + ZZ^\top)^{-1} = I_n - Z(I_k + Z^\top Z)^{-1}Z^\top", r"M^\ast",
    r"\delta_{ab}/V", r"\delta = P - P_{\rm lower}", r"\frac{\delta\ell}{1 + e^{(\ln P - \ln P_\ast)/w}}",
    r"{\sqrt{\mathrm{se}^2 + \mathrm{err}_{\rm theory}^2}}", r"\bar d^2/(3\sigma_c^2)",
]
BAD_MATH = {
    "shift": [r"A = m J/L + q(S - J/L) + A_\perp", r"q\Big(S - \frac JL\Big)", r"S_{l,l-1}=1",
              r"\operatorname{softmax}(\Delta S)", r"\Delta\,(S - J/L)", r"\langle S, S\rangle = L",
              r"\operatorname{span}(J, S)", r"A = 0.6\,S + 0.1\,J", r"A = S", r"S^\top S"],
    "U": [r"U(c) = -\ln p(c)", r"U = (S - J/L)/\sqrt{L-1}", r"U = \Phi/\sqrt\kappa", r"\det(I + UU^\top)"],
    "zero": [r"T_{0m} = 0", r"l = 0, \dots, L-1", r"x_0"],
    "F": [r"F_v(\Delta; P) &= S_v\big(", r"F_{\rm pool} = F_{\rm copy}", r"F_b = -\ln\Pr(c \in b)",
          r"F_{\rm map}(\Delta; 350)", r"F' = F'' = 0", r"F(\Delta) - F(0)", r"F(\Delta) - \min F",
          r"F \approx -G_0\, s(\Delta)", r"\sigma_G^2 F &= -x", r"B &= F(x_-) - F(x_+)",
          r"\partial(F_{\rm copy} - F_{\rm pool})/\partial P"],
    "rho": [r"\rho = \frac{\tanh\big(\frac{H}{4kw}\big)}{\tanh\big(\frac{H}{4w}\big)}",
            r"S_\perp = \frac n2(\rho - 1 - \ln\rho)", r"\rho = r^2/(n s_c^2)",
            r"\rho = \sum_j e^{2\eta_j}/(\sum_j e^{\eta_j})^2", r"\mathbb E[\rho^j \mid t]",
            r"2\sum_{ij}\rho_{ij}^2", r"\mathbb E\,\hat\rho^2 \approx \rho^2"],
    "s": [r"s = Q^2/(L(\rho+\varepsilon))", r"S_{\text{copy}}(s) \approx -\mathcal G\,s/(1+s)",
          r"-G_0\, s(\Delta)", r"s = \gamma_1^2/(L\alpha_1)", r"\alpha_2 = Lm^2 + c_L r^2",
          r"c_L = L(L-1)/(L^2-2)", r"d_2 = c_L r_0^2 + \varepsilon", r"S_v(\alpha_1, L, \gamma_1, L-1; P)",
          r"S_v\big(\alpha_1(\Delta), L", r"&= \frac{S'''}{12}\,s^3 \;\propto\; \delta^{3/2}.",
          r"s = 2x_+ \propto \delta^{1/2}", r"p_0(s) \simeq \frac{\exp[L\varphi(\lambda) - \lambda\cdot s]}",
          r"s = (\alpha_1, \gamma_1)", r"s = L\nabla\varphi(\lambda)", r"\lambda \mapsto s",
          r"\int_{t_3}^{t}\big(f'(s) - k\big)\,ds"],
    "H": [r"\psi = \frac{\tanh\big(\frac{H}{4kw}\big)}{\tanh\big(\frac{H}{4w}\big)}", r"a = H/(2k)",
          r"u = H/(4w)", r"w < \frac{H}{4u_{1/2}}", r"H_2"],
    "Z": [r"A_\perp = R + Z", r"R\mathbf 1 \ne 0", r"\lVert R\mathbf 1\rVert^2 = L\lVert R\rVert^2"],
    "prev": [r"y_l = x_{p(l)+1}", r"p(l) < l", r"x_{p(l)} = x_l"],
    "f": [r"f(t) = \ln\pi", r"\hat f(t) = k t + \hat f_0", r"f(t_3) > \hat f(t_3)", r"f(u, v)",
          r"P_c = \sigma_0^2\, f_c(L, V; \sigma_G, \sigma_b, \omega)", r"\int_{t_3}^{t}\big(f'(\tilde t) - k\big)\,d\tilde t"],
    "h": [r"h = \frac{1}{\operatorname{Var}} = \frac{u}{a + bu}", r"\frac{d^2h}{du^2}", r"h(\varepsilon) = \gamma_{\rm copy}^2",
          r"\frac{dh}{d\varepsilon}"],
    "B": [r"B &= S(x_-) - S(x_+)", r"B \propto \delta^{3/2}"],
    "b": [r"\qquad a = \partial_P S', \quad b = S''' ,", r"2|a|\delta\,x_+ - \frac{b}{3}x_+^3 = \frac{2b}{3}x_+^3",
          r"P_1 \propto V^{a}L^{b}", r"L^b", r"\ln P_2 = a_0 + b\ln L", r"a\,I_V + b\,J_V", r"a + Vb",
          r"H_{mm}(P) &= \frac1{s_p^2} + b\,P - a\,P^2", r"P_0 = b/a", r"P^2 - bP - e &= 0",
          r"\frac{b + \sqrt{b^2 + e}}{b + \sqrt{b^2 + 4e}}", r"2 - x \approx \frac{e}{b^2}", r"x_b = d\ln b/d\ln L",
          r"\operatorname{Var} = a/(P_\ast - P) + b", r"\frac{u}{a + bu}"],
    "MN": [r"\mathbb E[X^\top M X] = \frac{\operatorname{tr}M}{V} I", r"(M + ZNZ^\top)^{-1} = M^{-1} - M^{-1}Z",
           r"\operatorname{tr}(Y^\top\Phi M\Phi^\top Y)"],
    "delta": [r"{\sqrt{\mathrm{se}^2 + \delta_{\rm theory}^2}}", r"\delta^2/(3\sigma_c^2)"],
    "borrowed": [r"T_{1m} = 0", r"l=m", r"\ln P_1 = c + a\ln V + b\ln L", r"\ln P_2 = c + b\ln L", r"(a, c) = (1, 0)",
                 r"a\bar x + c\mathbf 1 - y", r"(g_1^2 + 1)/(g_2 + 3)", r"N(0, s_c^2 I_n)",
                 r"\lVert f_0\rVert^2 = V\cdot\frac1{V^2}"],
}
DETECTOR = {"shift": shift_as_s, "U": u_misuse, "zero": zero_position, "F": f_misuse, "rho": rho_misuse,
            "s": s_misuse, "H": h_misuse, "Z": z_misuse, "borrowed": borrowed,
            **{name: (lambda math, ps=ps: math_offences(math, ps)) for name, ps in DOUBLE_MEANING_MATH.items()}}


@pytest.mark.parametrize("math", LEGIT_MATH)
def test_detectors_pass_legitimate_math(math):
    flagged = {name: detect(math) for name, detect in DETECTOR.items()}
    assert not any(flagged.values()), f"{math!r} flagged: {flagged}"


@pytest.mark.parametrize("rule, math", [(r, m) for r, ms in BAD_MATH.items() for m in ms])
def test_detectors_catch_old_notation(rule, math):
    assert DETECTOR[rule](math), f"{rule} detector misses {math!r}"


def test_prose_detectors():
    assert SHIFT_AS_S_PROSE.search("uniform pooling $J/L$ and the shift $S$.")
    assert SHIFT_AS_S_PROSE.search("(zero row sums, orthogonal to $S$)")
    assert SHIFT_AS_S_PROSE.search("orthogonal to $J$ and to $S$ (both products")
    assert not SHIFT_AS_S_PROSE.search("The quartic terms of $S$ cut the divergence off")
    assert U_MISUSE_PROSE.search("where a local minimum of $U$ disappears")
    assert not U_MISUSE_PROSE.search("whose energy is the training objective $U$ {eq}`map-objective`")
    assert ZERO_POSITION_PROSE.search("position $0$ copies position $L-1$")
    assert ZERO_POSITION_PROSE.search("position 0 has no target")
    assert not ZERO_POSITION_PROSE.search("position 1 copies position $L$; at $P = 0.5$")
    assert DEPTH_AS_B_PROSE.search("and the depth $B$ of the copy minimum (the")
    assert not DEPTH_AS_B_PROSE.search("and the depth $S_{\\rm b}$ of the copy minimum; $K$ and $B$ are")


def test_split_page_separates_code_and_captions():
    page = "\n".join(["Text $S(m, q)$.", "```{code-cell}", ":mystnb:", ":    caption: the shift $S$",
                      "x = 1  # position 0", "```", "```{math}", ":label: x", r"S_{l,l-1}", "```"])
    prose, code = split_page(page)
    assert [line for _, line in code] == ["x = 1  # position 0"]
    assert ":    caption: the shift $S$" in [line for _, line in prose]
    assert sorted(m for _, m in math_segments(prose)) == sorted(["S(m, q)", "S", "\nS_{l,l-1}\n"])


# --------------------------------------------------------------------------
# the book's pages
# --------------------------------------------------------------------------


def offences(page: Path, math_rule, prose_rule) -> list[str]:
    prose, code = split_page(page.read_text(encoding="utf-8"))
    found = [f"line {n}: ${m}$" for n, seg in math_segments(prose) + code_math(code) for m in math_rule(seg)]
    if prose_rule is not None:
        found += [f"line {n}: {m.group()}" for n, line in prose_text(prose) for m in prose_rule.finditer(line)]
    return found


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_shift_is_T_not_S(page):
    bad = offences(page, shift_as_s, SHIFT_AS_S_PROSE)
    assert not bad, f"{page.name}: the shift matrix is $T$ ($S$ is the action only): {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_U_is_the_parameter_potential_only(page):
    bad = offences(page, u_misuse, U_MISUSE_PROSE)
    assert not bad, f"{page.name}: $U$ is only U(g, b, W); the copy weight's potential is Omega(c): {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_positions_start_at_one(page):
    bad = offences(page, zero_position, ZERO_POSITION_PROSE)
    assert not bad, f"{page.name}: positions are l = 1, ..., L in prose and math (arrays are 0-based): {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_F_is_the_network_output_only(page):
    bad = offences(page, f_misuse, None)
    assert not bad, f"{page.name}: the reduced action is S(Delta) (data part S^data_v), the basin free energies " \
                    f"Omega_pool, Omega_copy; F is the network output: {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_rho_is_the_transverse_weight_only(page):
    bad = offences(page, rho_misuse, None)
    if page.stem not in RHO_PAGES:
        bad += offences(page, any_rho, None)
    assert not bad, f"{page.name}: rho is the linear chapter's transverse weight only (step concentration psi, " \
                    f"shell ratio Lambda, collision sum Psi, correlation matrix Xi): {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_no_bare_s_c_L_or_S_v_of_invariants(page):
    bad = offences(page, s_misuse, None)
    assert not bad, f"{page.name}: copy-channel ratio Upsilon, data gain Gamma(Delta), row-sum share xi_L, " \
                    f"data action S^data_v: {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_H_is_the_hessian_Z_the_partition_function(page):
    bad = offences(page, lambda math: h_misuse(math) + z_misuse(math), None)
    if page.stem not in Z_PAGES:
        bad += offences(page, any_z, None)
    assert not bad, f"{page.name}: H is the Hessian of S(m, q) (a refinement interval's width is tau); Z is the " \
                    f"partition function (the transverse parts are A_row, A_rest): {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_no_borrowed_letters(page):
    bad = offences(page, borrowed, None)
    assert not bad, f"{page.name}: positions are l, j, k; c is the copy weight (a fit's intercept is a_0); g are the " \
                    f"logits; the normal law is \\mathcal N; position 1's output is f_1: {bad}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_one_meaning_for_p_f_h_B_b_M_delta(page):
    bad = offences(page, double_meaning, DEPTH_AS_B_PROSE)
    assert not bad, f"{page.name}: p is a density (the previous occurrence is prev(l)); f the output, h_j layer 1's " \
                    f"output, B the data moment, b the bias, e Euler's number; no generic M, N; delta is " \
                    f"Kronecker's or an exercise's own: {bad}"


def test_any_z_detector():
    assert any_z(r"A_\perp = R + Z") and any_z(r"\mathbb E_{\mathcal D} \ln Z(\mathcal D)")
    assert not any_z(r"\hat R") and not any_z(r"\Xi_{ij}") and not any_z(r"\mathcal D")


def test_any_rho_detector():
    assert any_rho(r"P_2 \propto \rho + \varepsilon") and any_rho(r"\varrho")
    assert not any_rho(r"\Lambda - 1 - \ln\Lambda") and not any_rho(r"\Psi")


# --------------------------------------------------------------------------
# the notation page itself
# --------------------------------------------------------------------------


def notation_rows() -> list[list[str]]:
    """Cells of every row of the four symbol tables (header and rule lines left out)."""
    rows = []
    for line in NOTATION.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| Symbol"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows.append(cells)
    return rows


ROWS = notation_rows()
NAMES = sorted({name for row in ROWS for name in re.findall(r"`((?:cl|spec)\.[\w.]+)`", row[3])})


def resolve(name: str):
    """The object a notation-page name refers to (AttributeError/ImportError if none)."""
    head, *parts = name.split(".")
    if head == "spec":
        obj = ModelSpec(L=32, V=4)
        for part in parts:
            obj = getattr(obj, part)
        return obj
    obj, path = copylib, "copylib"
    for part in parts:
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(path)  # a submodule not imported by its package
    return obj


def test_notation_page_has_the_four_groups():
    headings = re.findall(r"^## (.+)$", NOTATION.read_text(encoding="utf-8"), re.M)
    assert headings == ["Data and model", "Parameters and order parameters", "Theory and thresholds",
                        "Inference and diagnostics"]
    assert all(len(row) == 4 for row in ROWS), [row for row in ROWS if len(row) != 4]
    assert len(ROWS) > 40


def test_every_symbol_has_one_entry():
    symbols = [row[0] for row in ROWS]
    repeated = sorted({s for s in symbols if symbols.count(s) > 1})
    assert not repeated, f"symbols listed more than once on the notation page: {repeated}"


def test_every_symbol_links_where_it_is_introduced():
    pages = {p.stem for p in PAGES}
    for row in ROWS:
        linked = re.findall(r"\{doc\}`(?:[^`<]*<)?([\w/]+)>?`", row[2])
        assert linked and set(linked) <= pages, f"{row[0]}: no {{doc}} link to a book page in {row[2]!r}"


@pytest.mark.parametrize("name", NAMES)
def test_copylib_name_exists(name):
    try:
        resolve(name)
    except (AttributeError, ImportError) as err:
        pytest.fail(f"notation page names `{name}`, which copylib does not have: {err}")


def test_every_row_names_copylib_or_says_none():
    unnamed = [row[0] for row in ROWS if not re.search(r"`(cl|spec)\.", row[3]) and row[3] != "—"]
    assert not unnamed, f"rows with neither a copylib name nor '—': {unnamed}"


# --------------------------------------------------------------------------
# the glossary and the front matter: one name per concept (issue 37)
# --------------------------------------------------------------------------

GLOSSARY = BOOK / "glossary.md"
PRIMER = BOOK / "primer.md"
FRONT_MATTER = [BOOK / f"{name}.md" for name in ("intro", "primer", "results", "glossary", "notation", "reproducing")]
RHAT_NUMBER = re.compile(r"(?<![\d.])1\.\d{1,2}(?![\d.])")
THRESHOLD_STAR = re.compile(r"P\s*(\^|_)\s*\{?\s*(\\ast|\*)|\bP\*")


def glossary_entries(text: str) -> dict[str, str]:
    """Every term of the ``{glossary}`` block, mapped to the text of its entry (aliases share one)."""
    block = re.search(r"^```\{glossary\}\n(.*?)^```", text, re.S | re.M)
    assert block, "the glossary page has no {glossary} block"
    entries, terms, body = {}, [], []
    for line in block.group(1).splitlines() + [""]:
        if line and not line[0].isspace():
            if body:
                entries.update({t: "\n".join(body) for t in terms})
                terms, body = [], []
            terms.append(line.strip())
        elif line.strip():
            body.append(line.strip())
    entries.update({t: "\n".join(body) for t in terms if body})
    return entries


def rhat_thresholds_checked(text: str) -> set[str]:
    """The R-hat thresholds a chapter's checks apply: numbers 1.xx in a check call that names R-hat."""
    _, code = split_page(text)
    lines = [line for _, line in code]
    found = set()
    for i, line in enumerate(lines):
        if "checks." not in line:
            continue
        call, depth = "", 0
        for part in lines[i:]:  # the call runs until its parentheses close
            call += " " + part
            depth += part.count("(") - part.count(")")
            if depth <= 0:
                break
        if "R-hat" in call:
            found |= set(RHAT_NUMBER.findall(call))
    return found


def test_rhat_detector_on_strings():
    text = "\n".join(["```{code-cell}", 'checks.below("R-hat pooled below 1.1", x, 1.1)',
                      'checks.above("at P = 3 R-hat of q flags unmixed chains "', '             "(> 1.01)", r, 1.01)',
                      'checks.below("drift z < 4 at P = 1.5", z, 4)', "```", "R-hat below 1.3 in prose"])
    assert rhat_thresholds_checked(text) == {"1.1", "1.01"}


def test_glossary_states_every_rhat_threshold_the_chapters_check():
    """Reader's item 8: the glossary's R-hat entry names the thresholds the chapters apply (and why)."""
    entry = glossary_entries(GLOSSARY.read_text(encoding="utf-8"))["R-hat"]
    checked = {n: sorted(p.stem for p in PAGES if n in rhat_thresholds_checked(p.read_text(encoding="utf-8")))
               for p in PAGES for n in rhat_thresholds_checked(p.read_text(encoding="utf-8"))}
    assert checked, "no chapter checks an R-hat threshold: the detector is broken"
    missing = {n: pages for n, pages in checked.items() if not re.search(rf"(?<![\d.]){re.escape(n)}(?!\d)", entry)}
    assert not missing, f"R-hat thresholds checked in chapters but not stated in the glossary: {missing}"
    assert "1 + 1/n_{\\rm eff}" in entry, "the entry says why a chapter may need a threshold above 1.01"


def test_primer_terms_have_glossary_entries():
    entries = glossary_entries(GLOSSARY.read_text(encoding="utf-8"))
    linked = re.findall(r"\{term\}`(?:[^`<]*<)?([^`<>]+?)>?`", PRIMER.read_text(encoding="utf-8"))
    needed = {"action", "saddle point", "mean field", "order parameter", "first-order transition", "spinodal",
              "hysteresis", "nat", "annealed average", "quenched average", "likelihood temperature",
              "plug-in approximation", "plug-in marginal"}
    assert needed <= set(linked), f"the primer does not link {sorted(needed - set(linked))}"
    assert not set(linked) - set(entries), f"primer terms without a glossary entry: {sorted(set(linked) - set(entries))}"


def test_glossary_has_one_name_per_concept():
    entries = glossary_entries(GLOSSARY.read_text(encoding="utf-8"))
    assert "mean field" in entries and "saddle point" in entries
    assert entries["mean field"] != entries["saddle point"], "mean field (the version) and saddle point (the method)"
    assert "averaged-moment approximation" not in entries, "the plug-in approximation has one name"


@pytest.mark.parametrize("page", FRONT_MATTER, ids=[p.stem for p in FRONT_MATTER])
def test_front_matter_names_thresholds_P1_P2_P3(page):
    prose, _ = split_page(page.read_text(encoding="utf-8"))
    bad = [f"line {n}: ${m}$" for n, m in math_segments(prose) if THRESHOLD_STAR.search(m)]
    bad += [f"line {n}" for n, line in prose_text(prose) if re.search(r"\bP\*", line)]
    allowed = "written $P_\\ast$ in that chapter"  # the notation page names the predictability chapter's symbol
    bad = [b for b in bad if not (page.stem == "notation" and allowed in page.read_text(encoding="utf-8")
                                  and b.startswith("line") and "P_\\ast" in b)]
    assert not bad, f"{page.name}: a threshold is P_1, P_2 or P_3 (never P*): {bad}"
