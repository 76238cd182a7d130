#!/usr/bin/env bash
# System packages the figures and the report test need, installed only when missing:
#   fonts-wqy-microhei  a CJK font, so Chinese labels in figures render (no glyph boxes)
#   chromium            headless browser for the HTML report test
#   texlive-latex-*     booktabs and xcolor, which the LaTeX tables use
#   texlive-xetex, texlive-lang-chinese
#                       XeLaTeX and xeCJK: the tables hold Chinese text (labels, the audit's
#                       不知道), so they compile with XeLaTeX and a CJK font, as the tests do
# Needs root and apt-get; elsewhere it prints what to install and leaves the decision to you.
set -euo pipefail
missing=()
fc-list 2>/dev/null | grep -qi "wqy\|noto sans cjk\|noto serif cjk" || missing+=(fonts-wqy-microhei)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v pdflatex >/dev/null 2>&1 || missing+=(texlive-latex-base texlive-latex-recommended)
command -v xelatex >/dev/null 2>&1 || missing+=(texlive-xetex)
kpsewhich xeCJK.sty >/dev/null 2>&1 || missing+=(texlive-lang-chinese)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "note: please install ${missing[*]} (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
fi
