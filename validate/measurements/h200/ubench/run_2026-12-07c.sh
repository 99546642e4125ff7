#!/usr/bin/env bash
# Third device call of 2026-12-07: the second call's script again, after ldgsts.cu gained the
# GEMM-like row copies (ubench Q ids 156-191); results in h100_2026-12-07/third/.
exec bash "$(dirname "$0")/run_2026-12-07b.sh"
