#!/bin/sh
# Seeds fuzz/corpus/<target>/ from the bundled files. Run from sim/fuzz.
set -e
root=../..
mkdir -p corpus/ptx corpus/config_workload
cp $root/kernels/ptx/*.ptx $root/kernels/ptx/*/*.ptx $root/tests/fixtures/*.ptx corpus/ptx/ 2>/dev/null || true
for c in $root/configs/*.toml; do
  for w in $root/kernels/*.toml; do
    out=corpus/config_workload/$(basename $c .toml)-$(basename $w .toml)
    { cat $c; printf '\0'; cat $w; } > $out
  done
done
ls corpus/ptx | wc -l
ls corpus/config_workload | wc -l
