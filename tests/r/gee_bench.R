# Timing reference for bench/analyze.py: geepack + car on a prepared GEE data set.
#
# Usage: Rscript tests/r/gee_bench.R DATA.csv OUT.csv
#
# DATA.csv: model, dataset_type, category, cluster_id, agree, rows sorted by cluster_id
# (bench/analyze.py writes it from a synthetic long table).  One geeglm fit in sum-to-zero
# coding (Type III needs it; car's Type II does not depend on the coding) with the settings of
# tests/r/gee_reference.R, then car::Anova type 2 and 3 (Wald).  OUT.csv: the seconds of
# fit + both Anova calls, and the chi-square values so that the bench can compare them.
suppressPackageStartupMessages({
  library(geepack)
  library(car)
})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE, colClasses = c(cluster_id = "character"))
lev <- function(x) sort(unique(x), method = "radix")
for (v in c("model", "dataset_type", "category")) d[[v]] <- factor(d[[v]], levels = lev(d[[v]]))
d$cluster_id <- factor(d$cluster_id, levels = unique(d$cluster_id))
options(contrasts = c("contr.sum", "contr.poly"))
timing <- system.time({
  fit <- geeglm(agree ~ model + dataset_type * category + model:category, id = cluster_id,
                data = d, family = binomial, corstr = "exchangeable",
                control = geese.control(epsilon = 1e-10, maxit = 100))
  a2 <- Anova(fit, type = 2, test.statistic = "Wald")
  a3 <- Anova(fit, type = 3, test.statistic = "Wald")
})
out <- rbind(
  data.frame(quantity = "seconds", name = "", value = sprintf("%.6f", timing[["elapsed"]])),
  data.frame(quantity = "wald2_chi2", name = rownames(a2), value = sprintf("%.17g", a2[, "Chisq"])),
  data.frame(quantity = "wald3_chi2", name = rownames(a3), value = sprintf("%.17g", a3[, "Chisq"]))
)
write.csv(out, args[2], row.names = FALSE)
