# Lab 7 (the plotting hand-in): make targets, included by the top-level
# Makefile (in the student kit too).
#   make sweep [NP=n] [ARGS='lab options']   the sweep on 2 virtual nodes, network on
#   make plot CSV=results/lab7-cuda.csv [OUT=path/name]   gnuplot -> OUT.png, OUT.svg
#   make report CSV=results/lab7-cuda.csv [HANDIN=dir] [FORCE=1]
#                      the hand-in in labs/lab7_sweep/handin/: CSV copy, plot, report.md
.PHONY: sweep plot report

# The driver ends its CSV with the SHA-256 of the sweep.c it was built from
# (the grader holds a hand-in CSV against the sweep.c handed in with it).
# Expanded when the binary is linked: $^ are its sources.
LAB_CFLAGS_7 = -DNCCLAB_SWEEP_SHA256='"$(firstword $(shell (sha256sum $(filter %/sweep.c,$^) || shasum -a 256 $(filter %/sweep.c,$^)) 2>/dev/null))"'

sweep: ## lab 7: the sweep, NP ranks as 2 virtual nodes with the network on (NP: GPUs, else 4)
	@tools/lab7-sweep $(if $(filter 1,$(REF)),--ref) $(if $(NP),--np $(NP)) -- $(ARGS)

plot: ## lab 7: plot a sweep CSV with gnuplot (CSV=file [OUT=name]; PNG and SVG)
	@test -n "$(CSV)" || { echo "usage: make plot CSV=results/lab7-BACKEND.csv [OUT=name]" >&2; exit 2; }
	@tools/lab7-plot "$(CSV)" $(if $(OUT),"$(OUT)")

report: ## lab 7: hand-in from a sweep CSV into labs/lab7_sweep/handin/ (CSV=file [FORCE=1])
	@test -n "$(CSV)" || { echo "usage: make report CSV=results/lab7-BACKEND.csv [HANDIN=dir] [FORCE=1]" >&2; exit 2; }
	@tools/lab7-report $(if $(filter 1,$(FORCE)),--force) "$(CSV)" "$(or $(HANDIN),labs/lab7_sweep/handin)"
