# Reference values on R's own data sets (tests/fixtures/datasets/*.csv) for analyses.gee:
# geepack + car + emmeans on ohio and respiratory, brglm2 on endometrial.
#
# Usage: Rscript tests/r/gee_datasets.R DIR OUT.csv
#
# Cases (the Python formula in brackets):
#   ohio:          geeglm(resp ~ age * factor(smoke), id = id, exchangeable)   [resp ~ age * C(smoke)]
#   resp_factor:   geeglm(outcome ~ factor(center) + treat + sex + age + baseline,
#                  id = patient, exchangeable), patient = (center, id); emmeans(~ treat) and
#                  emmeans(~ treat | baseline) with emmeans' default cov.keep = "2"
#   resp_numeric:  the same with center numeric (R's reading of a 1/2 code); emmeans(~ treat)
#   endometrial:   glm(HG ~ NV + PI + EH, binomial, method = "brglmFit") (AS_mean): coefficients,
#                  model-based SE from summary(), and the sandwich (X'WX)^-1 X'diag(r^2)X (X'WX)^-1
#                  by hand (each row its own cluster).
# Type II in R's default treatment coding, Type III refitted in contr.sum coding.
# OUT.csv: case, quantity, name, value (17 significant digits).
suppressPackageStartupMessages({
  library(geepack); library(car); library(emmeans); library(brglm2)
})
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
out <- list()
put <- function(case, quantity, name, value) {
  out[[length(out) + 1]] <<- data.frame(case = case, quantity = quantity, name = name,
                                        value = sprintf("%.17g", value))
}
ctl <- geese.control(epsilon = 1e-12, maxit = 200)
gee_case <- function(case, form, d, id) {
  fit <- geeglm(form, id = id, data = d, family = binomial, corstr = "exchangeable",
                control = ctl)
  co <- summary(fit)$coefficients
  put(case, "coef", rownames(co), co[, "Estimate"])
  put(case, "se_robust", rownames(co), co[, "Std.err"])
  put(case, "alpha", "", fit$geese$alpha)
  put(case, "scale", "", fit$geese$gamma)
  a <- Anova(fit, type = 2, test.statistic = "Wald")
  put(case, "wald2_chi2", rownames(a), a[, "Chisq"])
  put(case, "wald2_df", rownames(a), a[, "Df"])
  # Type III in sum-to-zero coding, as car's documentation asks (and as analyses.gee tests)
  old <- options(contrasts = c("contr.sum", "contr.poly"))
  fit_sum <- geeglm(form, id = id, data = d, family = binomial, corstr = "exchangeable",
                    control = ctl)
  options(old)
  a <- Anova(fit_sum, type = 3, test.statistic = "Wald")
  put(case, "wald3_chi2", rownames(a), a[, "Chisq"])
  put(case, "wald3_df", rownames(a), a[, "Df"])
  fit
}
emm <- function(case, fit, spec, tag, d) {
  e <- as.data.frame(summary(emmeans(fit, spec, type = "response", data = d)))
  by <- setdiff(names(e), c("prob", "SE", "df", "asymp.LCL", "asymp.UCL"))
  key <- do.call(paste, c(lapply(by, function(v) as.character(e[[v]])), sep = "|"))
  put(case, paste0(tag, "_estimate"), key, e$prob)
  put(case, paste0(tag, "_se"), key, e$SE)
}

ohio <- read.csv(file.path(dir, "ohio.csv"))
invisible(gee_case("ohio", resp ~ age * factor(smoke), ohio, ohio$id))

r <- read.csv(file.path(dir, "respiratory.csv"), stringsAsFactors = TRUE)
r$patient <- r$center * 1000 + r$id  # geepack groups consecutive rows; the table is sorted
f <- gee_case("resp_factor", outcome ~ factor(center) + treat + sex + age + baseline, r,
              r$patient)
emm("resp_factor", f, ~ treat, "mm_treat", r)
emm("resp_factor", f, ~ treat | baseline, "mm_treat_baseline", r)
f <- gee_case("resp_numeric", outcome ~ center + treat + sex + age + baseline, r, r$patient)
emm("resp_numeric", f, ~ treat, "mm_treat", r)

e <- read.csv(file.path(dir, "endometrial.csv"))
b <- glm(HG ~ NV + PI + EH, family = binomial, data = e, method = "brglmFit", type = "AS_mean",
         epsilon = 1e-12, maxit = 500)
co <- summary(b)$coefficients
put("endometrial", "coef", rownames(co), co[, "Estimate"])
put("endometrial", "se_model", rownames(co), co[, "Std. Error"])
x <- model.matrix(b)
mu <- fitted(b)
bread <- solve(t(x) %*% (x * (mu * (1 - mu))))
meat <- t(x) %*% (x * (e$HG - mu)^2)
put("endometrial", "se_robust", colnames(x), sqrt(diag(bread %*% meat %*% bread)))

write.csv(do.call(rbind, out), args[2], row.names = FALSE, quote = TRUE)
