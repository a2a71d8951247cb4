# Lab 7: plot a sweep CSV (labs/lab7_sweep/lab7.h has the columns) with gnuplot.
#   gnuplot -e "csv='results/lab7-cuda.csv'; out='results/lab7-cuda'; system='...'" tools/plot-sweep.gp
# writes out.png and out.svg: bus bandwidth against message size, log2 x axis,
# one line per pattern. tools/lab7-plot (make plot) names the system in the title from the CSV.
if (!exists("csv")) print "plot-sweep.gp: set csv='FILE'"; exit status 2
if (!exists("out")) out = csv[1:strlen(csv) - 4]
if (!exists("system")) system = ""
if (!exists("link")) link = 0
title = "all-reduce bus bandwidth".(strlen(system) ? "\n".system : "")

set datafile separator ","
# Column numbers, as in LAB7_CSV_HEADER.
BYTES = 2; BUSBW = 6; STATUS = 14

# The range of sizes measured, for the axis and its labels.
stats csv using BYTES skip 1 nooutput
xmin = STATS_min; xmax = STATS_max

size_label(b) = b >= 2**30 ? sprintf("%g GiB", b / 2.0**30) : \
                b >= 2**20 ? sprintf("%g MiB", b / 2.0**20) : \
                b >= 2**10 ? sprintf("%g KiB", b / 2.0**10) : sprintf("%g B", b)
# A label every factor of 4 at most, so 4 KiB..16 GiB stays readable.
kmin = floor(log(xmin) / log(2) + 0.5); kmax = floor(log(xmax) / log(2) + 0.5)
step = (kmax - kmin) > 12 ? 2 : 1
set xtics ()
do for [k = kmin:kmax:step] { set xtics add (size_label(2.0**k) 2.0**k) }

set logscale x 2
set xrange [xmin / 1.3 : xmax * 1.3]
set yrange [0:*]
if (link > 0) set offsets 0, 0, graph 0.12, 0  # room above the link's line
set xlabel "message size (bytes per rank, log2 scale)"
set ylabel "bus bandwidth (GB/s, 10^9 bytes/s)"
set title title noenhanced
set key top left box opaque
set grid xtics ytics lc rgb "#dddddd"
set xtics rotate by -30

# One line per pattern; a row of another pattern, or a skipped one, is NaN.
pick(p) = (strcol(1) eq p && strcol(STATUS) eq "ok") ? column(BUSBW) : NaN
PLOT = "plot csv skip 1 using BYTES:(pick('global')) with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'global (whole job)', \
            csv skip 1 using BYTES:(pick('node_local')) with linespoints lw 2 pt 5 lc rgb '#2ca02c' title 'node-local groups', \
            csv skip 1 using BYTES:(pick('cross_node')) with linespoints lw 2 pt 9 lc rgb '#d62728' title 'cross-node groups'".\
       (link > 0 ? sprintf(", %g with lines dt 2 lw 1.5 lc rgb '#555555' title 'link between the nodes (model): %g GB/s'", link, link) : "")

set terminal pngcairo size 1000,620 font "sans,11"
set output out.".png"
eval PLOT
set terminal svg size 1000,620 font "sans,11" dynamic
set output out.".svg"
eval PLOT
set output
