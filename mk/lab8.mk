# Lab 8 (bonus, your own all-reduce): make targets, included by the top-level
# Makefile (in the student kit too).
#   make plot-race CSV=results/lab8-cuda.csv [OUT=path/name]   gnuplot -> OUT.png, OUT.svg
.PHONY: plot-race

plot-race: ## lab 8: plot a race CSV: time and busbw, yours vs NCCL, fitted ring model (CSV=file)
	@test -n "$(CSV)" || { echo "usage: make plot-race CSV=results/lab8-BACKEND.csv [OUT=name]" >&2; exit 2; }
	@tools/lab8-plot "$(CSV)" $(if $(OUT),"$(OUT)")
