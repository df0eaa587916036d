#!/usr/bin/env bash
# Make an LDA corpus from the King James Bible: one document per chapter
# (1189 documents), as plain text with documents separated by blank lines.
#   scripts/make-kjv-corpus.sh [OUT]     (default: build/data/kjv-chapters.txt)
# Reads Debian's bible-kjv-text through its reader `bible` (package
# bible-kjv; installed here if missing and we are root).  Tokenizing, stop
# words and the rare-word cut are the lda app's (`lda --text OUT`); for a
# UCI bag-of-words copy run lda with --write-uci DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
out=${1:-build/data/kjv-chapters.txt}

if ! command -v bible >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		echo "make-kjv-corpus: installing bible-kjv (the reader of bible-kjv-text)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			-o DPkg::Lock::Timeout=600 --no-install-recommends \
			bible-kjv bible-kjv-text >/dev/null
	else
		echo "make-kjv-corpus: 'bible' not found: run 'sudo apt-get install bible-kjv bible-kjv-text'" >&2
		exit 1
	fi
fi

mkdir -p "$(dirname "$out")"
tmp=$out.tmp.$$
# `bible` prints "Book N" headings, then "  V text" verses (one per line
# with a wide -l).  Each heading starts a document; verse numbers go.
bible -l100000 "gen1:1-rev22:21" |
	awk '
	/^[^ \t]/ { if (n++) printf "\n"; next }     # chapter heading
	/^[ \t]+[0-9]+ / { sub(/^[ \t]+[0-9]+ /, ""); print; next }
	' >"$tmp"
docs=$(grep -c '^$' "$tmp" || true)
docs=$((docs + 1))
if [ "$docs" -ne 1189 ]; then
	echo "make-kjv-corpus: expected 1189 chapters, got $docs; is bible-kjv-text complete?" >&2
	rm -f "$tmp"
	exit 1
fi
mv "$tmp" "$out"
echo "make-kjv-corpus: $out: $docs chapters, $(wc -w <"$out") words" >&2
