# Writes the R data sets the GEE is checked on to tests/fixtures/datasets/*.csv.
#
# Usage: Rscript tests/r/export_datasets.R OUT_DIR
#
# geepack's ohio (wheeze of 537 children at ages 7-10, mother smoking) and respiratory
# (111 patients of two centres, 4 visits), brglm2's endometrial (79 patients; NV
# separates HG).  Integers stay integers, factors are written as their labels.
suppressPackageStartupMessages({library(geepack); library(brglm2)})
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args)) args[1] else "tests/fixtures/datasets"
data(ohio, package = "geepack")
data(respiratory, package = "geepack")
data(endometrial, package = "brglm2")
write.csv(ohio, file.path(out, "ohio.csv"), row.names = FALSE)
write.csv(respiratory, file.path(out, "respiratory.csv"), row.names = FALSE)
write.csv(endometrial, file.path(out, "endometrial.csv"), row.names = FALSE)
cat(sprintf("geepack %s, brglm2 %s, %s\n", packageVersion("geepack"),
            packageVersion("brglm2"), R.version.string))
