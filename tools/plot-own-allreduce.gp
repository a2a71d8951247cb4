# Lab 8: plot a race CSV (lab 7's columns; patterns nccl, ring, pipelined, rd,
# own, and the fitted ring_model) with gnuplot. tools/lab8-plot passes
#   csv, out, system, model_a (us), model_b (us per byte), alpha (us), beta (GB/s)
# and this writes out.png and out.svg: time (log-log) and bus bandwidth.
if (!exists("csv")) print "plot-own-allreduce.gp: set csv='FILE'"; exit status 2
if (!exists("out")) out = csv[1:strlen(csv) - 4]
if (!exists("system")) system = ""
if (!exists("model_b")) model_a = 0; model_b = 0

set datafile separator ","
BYTES = 2; TIME = 4; BUSBW = 6; RANKS = 7; STATUS = 14

stats csv using BYTES skip 1 nooutput
xmin = STATS_min; xmax = STATS_max
stats csv using RANKS skip 1 nooutput
n = STATS_max

size_label(b) = b >= 2**30 ? sprintf("%g GiB", b / 2.0**30) : \
                b >= 2**20 ? sprintf("%g MiB", b / 2.0**20) : \
                b >= 2**10 ? sprintf("%g KiB", b / 2.0**10) : sprintf("%g B", b)
kmin = floor(log(xmin) / log(2) + 0.5); kmax = floor(log(xmax) / log(2) + 0.5)
step = (kmax - kmin) > 12 ? 2 : 1
set xtics ()
do for [k = kmin:kmax:step] { set xtics add (size_label(2.0**k) 2.0**k) }
set xtics rotate by -30
set logscale x 2
set xrange [xmin / 1.3 : xmax * 1.3]
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque

pick(p) = (strcol(1) eq p && strcol(STATUS) eq "ok") ? 1 : 0
time_of(p) = pick(p) ? column(TIME) : NaN
busbw_of(p) = pick(p) ? column(BUSBW) : NaN
has_model = model_b > 0
model_t(s) = model_a + model_b * s
model_busbw(s) = n > 1 ? 2.0 * (n - 1) / n * s / model_t(s) / 1e3 : NaN
model_title = sprintf("ring model: alpha %.3g us/step, beta %.3g GB/s", alpha, beta)
set samples 200

STYLE_NCCL = "with linespoints lw 3 pt 7 lc rgb '#111111'"
STYLE_OWN = "with linespoints lw 3 pt 5 lc rgb '#d62728'"
CURVES(col) = sprintf("csv skip 1 using BYTES:(%s('nccl')) %s title 'ncclAllReduce', \
    csv skip 1 using BYTES:(%s('own')) %s title 'yours (lab8\\_allreduce)', \
    csv skip 1 using BYTES:(%s('ring')) with linespoints lw 1.5 pt 1 lc rgb '#1f77b4' title 'ring (Task 1)', \
    csv skip 1 using BYTES:(%s('pipelined')) with linespoints lw 1.5 pt 2 lc rgb '#2ca02c' title 'pipelined ring (Task 2)', \
    csv skip 1 using BYTES:(%s('rd')) with linespoints lw 1.5 pt 4 lc rgb '#9467bd' title 'recursive doubling (Task 3)'", \
    col, STYLE_NCCL, col, STYLE_OWN, col, col, col)

do for [term = 1:2] {
    if (term == 1) { set terminal pngcairo size 1400,620 font "sans,11"; set output out.".png" }
    if (term == 2) { set terminal svg size 1400,620 font "sans,11" dynamic; set output out.".svg" }
    set multiplot layout 1,2 title "your all-reduce against NCCL's".(strlen(system) ? "\n".system : "") noenhanced

    set logscale y 10
    set yrange [*:*]
    set xlabel "message size (bytes per rank, log2 scale)"
    set ylabel "time per all-reduce (us, log scale)"
    set title "time"
    if (has_model) {
        eval "plot ".CURVES("time_of").", model_t(x) with lines dt 2 lw 2 lc rgb '#ff7f0e' title model_title"
    } else {
        eval "plot ".CURVES("time_of")
    }

    unset logscale y
    set yrange [0:*]
    set ylabel "bus bandwidth (GB/s, 10^9 bytes/s)"
    set title "bus bandwidth, 2(n-1)/n x bytes / time"
    if (has_model) {
        eval "plot ".CURVES("busbw_of").", model_busbw(x) with lines dt 2 lw 2 lc rgb '#ff7f0e' title 'ring model'"
    } else {
        eval "plot ".CURVES("busbw_of")
    }
    unset multiplot
}
set output
