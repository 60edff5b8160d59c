# Reference values for analyses.gee.emmeans (emmeans on a geeglm fit) and for the
# bias-reduced fit of analyses.gee.solver (brglm2 on the independence working model).
#
# Usage: Rscript tests/r/gee_emmeans_brglm.R JOB DATA.csv OUT.csv FORMULA
#
# DATA.csv holds the fitted rows: agree (0/1), the formula's factors and cluster_id,
# sorted by cluster.  Factor levels are sorted in C-locale (byte) order, as Python sorts.
# JOB "emmeans": geeglm(binomial, exchangeable), then
#   emmeans(fit, ~ dataset_type * category, type = "response")            -> mm_*
#   emmeans(regrid(ref_grid(fit)), ~ dataset_type * category) (response-scale average) -> mmr_*
#   pairs(regrid(emmeans(fit, ~ dataset_type | category))), by = NULL      -> ct_*
#   (p-values Holm-adjusted over all categories, intervals unadjusted).
# JOB "brglm": glm(binomial, method = "brglmFit", type = "AS_mean")        -> coef, vcov.
# OUT.csv: quantity, name, value (17 significant digits).
suppressPackageStartupMessages({
  library(geepack)
  library(emmeans)
  library(brglm2)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4) stop("usage: Rscript gee_emmeans_brglm.R JOB DATA.csv OUT.csv FORMULA")
job <- args[1]
form <- as.formula(args[4])
d <- read.csv(args[2], stringsAsFactors = FALSE, colClasses = c(cluster_id = "character"))
for (v in setdiff(all.vars(form), "agree")) {
  d[[v]] <- factor(d[[v]], levels = sort(unique(d[[v]]), method = "radix"))
}
d$cluster_id <- factor(d$cluster_id, levels = unique(d$cluster_id))

out <- list()
put <- function(quantity, name, value) {
  out[[length(out) + 1]] <<- data.frame(quantity = quantity, name = name,
                                        value = sprintf("%.17g", value))
}
if (job == "emmeans") {
  fit <- geeglm(form, id = cluster_id, data = d, family = binomial, corstr = "exchangeable",
                control = geese.control(epsilon = 1e-12, maxit = 200))
  put("coef", names(coef(fit)), coef(fit))
  e <- as.data.frame(summary(emmeans(fit, ~ dataset_type * category, type = "response")))
  key <- paste(e$dataset_type, e$category, sep = "|")
  put("mm_estimate", key, e$prob)
  put("mm_se", key, e$SE)
  put("mm_ci_low", key, e$asymp.LCL)
  put("mm_ci_high", key, e$asymp.UCL)
  er <- as.data.frame(summary(emmeans(regrid(ref_grid(fit)), ~ dataset_type * category),
                               infer = c(TRUE, FALSE)))
  key <- paste(er$dataset_type, er$category, sep = "|")
  put("mmr_estimate", key, er$prob)
  put("mmr_se", key, er$SE)
  put("mmr_ci_low", key, er$asymp.LCL)
  pr <- pairs(regrid(emmeans(fit, ~ dataset_type | category)))
  ci <- as.data.frame(summary(pr, by = NULL, adjust = "none", infer = c(TRUE, TRUE)))
  holm <- as.data.frame(summary(pr, by = NULL, adjust = "holm"))
  key <- as.character(ci$category)
  put("ct_difference", key, ci$estimate)
  put("ct_se", key, ci$SE)
  put("ct_z", key, ci$z.ratio)
  put("ct_p_value", key, ci$p.value)
  put("ct_ci_low", key, ci$asymp.LCL)
  put("ct_ci_high", key, ci$asymp.UCL)
  put("ct_p_holm", as.character(holm$category), holm$p.value)
} else if (job == "brglm") {
  fit <- glm(form, data = d, family = binomial, method = "brglmFit", type = "AS_mean",
             control = brglmControl(epsilon = 1e-12, maxit = 500))
  co <- coef(fit)
  put("coef", names(co), co)
  v <- vcov(fit)
  put("vcov", as.vector(outer(rownames(v), colnames(v), paste, sep = "|")), as.vector(v))
} else {
  stop("JOB must be 'emmeans' or 'brglm'")
}
write.csv(do.call(rbind, out), args[3], row.names = FALSE)
