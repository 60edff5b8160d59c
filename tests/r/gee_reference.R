# Reference values for analyses.gee from R's geepack + car, computed independently of Python.
#
# Usage: Rscript tests/r/gee_reference.R TABLE.csv OUT.csv
#
# TABLE.csv is a long table (model, dataset, dataset_type, item_id, category, variant_id,
# answer, valid).  This script derives the per-row `agree` flag itself (majority of the
# prompt set of model x dataset x item x category over valid rows; ties go to the original
# prompt's answer when it is among the modes, else to the smallest index), then fits the
# type model and the dataset model (Kamal et al. 2026, Table 3)
#   agree ~ model + dataset_type * category + model:category
#   agree ~ model + dataset * category + model:category      (quantities prefixed dataset_)
# by geeglm(binomial, exchangeable) with clusters = item (dataset + item_id) and = model x item,
# rows sorted by cluster, in treatment and in sum-to-zero coding, and runs
# car::Anova(type = 2 / 3, test.statistic = "Wald").  Factor levels are sorted in C-locale
# (byte) order, as Python sorts them.  OUT.csv: cluster, quantity, name, value (17 digits).
suppressPackageStartupMessages({
  library(geepack)
  library(car)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2) stop("usage: Rscript gee_reference.R TABLE.csv OUT.csv")

d <- read.csv(args[1], colClasses = c(item_id = "character", variant_id = "character"),
              stringsAsFactors = FALSE)
d$valid <- as.logical(d$valid)
d <- d[d$valid, ]
d$answer <- as.integer(d$answer)

# --- agreement, written out step by step -------------------------------------------------
item_key <- paste(d$model, d$dataset, d$item_id, sep = "\r")
set_key <- paste(item_key, d$category, sep = "\r")
modes_of <- function(a) {
  tab <- table(a)
  sort(as.integer(names(tab)[tab == max(tab)]))
}
orig <- d[d$category == "original", ]
orig_answer <- vapply(split(orig$answer, item_key[d$category == "original"]),
                      function(a) modes_of(a)[1], integer(1))
majority <- vapply(split(seq_len(nrow(d)), set_key), function(rows) {
  modes <- modes_of(d$answer[rows])
  pref <- orig_answer[item_key[rows[1]]]
  if (!is.na(pref) && pref %in% modes) pref else modes[1]
}, integer(1))
d$agree <- as.integer(d$answer == majority[set_key])
# a set with a single valid answer has no agreement (C_i = 1 by construction): left out
set_size <- table(set_key)
d$set_n <- as.integer(set_size[set_key])

m <- d[d$category != "original" & d$set_n >= 2, ]
lev <- function(x) sort(unique(x), method = "radix")
for (v in c("model", "dataset", "dataset_type", "category")) {
  m[[v]] <- factor(m[[v]], levels = lev(m[[v]]))
}
forms <- list(
  list(prefix = "", form = agree ~ model + dataset_type * category + model:category),
  list(prefix = "dataset_", form = agree ~ model + dataset * category + model:category)
)

out <- list()
put <- function(cluster, quantity, name, value) {
  out[[length(out) + 1]] <<- data.frame(cluster = cluster, quantity = quantity, name = name,
                                        value = sprintf("%.17g", value))
}
for (cl in c("item", "model_item")) {
  m$cluster_id <- if (cl == "item") paste(m$dataset, m$item_id, sep = "/") else
    paste(m$model, m$dataset, m$item_id, sep = "/")
  s <- m[order(m$cluster_id, method = "radix"), ]
  s$cluster_id <- factor(s$cluster_id, levels = unique(s$cluster_id))
  put(cl, "n_obs", "", nrow(s))
  put(cl, "n_agree", "", sum(s$agree))
  for (f in forms) {
    q <- function(name) paste0(f$prefix, name)
    for (coding in c("treatment", "sum")) {
      options(contrasts = if (coding == "treatment") c("contr.treatment", "contr.poly")
                          else c("contr.sum", "contr.poly"))
      fit <- geeglm(f$form, id = cluster_id, data = s, family = binomial,
                    corstr = "exchangeable", control = geese.control(epsilon = 1e-12, maxit = 200))
      co <- summary(fit)$coefficients
      put(cl, q(paste0("coef_", coding)), rownames(co), co[, "Estimate"])
      put(cl, q(paste0("se_", coding)), rownames(co), co[, "Std.err"])
      if (coding == "treatment") {
        put(cl, q("alpha"), "", fit$geese$alpha)
        put(cl, q("scale"), "", fit$geese$gamma)
        a2 <- Anova(fit, type = 2, test.statistic = "Wald")
        put(cl, q("wald2_chi2"), rownames(a2), a2[, "Chisq"])
        put(cl, q("wald2_df"), rownames(a2), a2[, "Df"])
      } else {
        a3 <- Anova(fit, type = 3, test.statistic = "Wald")
        put(cl, q("wald3_chi2"), rownames(a3), a3[, "Chisq"])
        put(cl, q("wald3_df"), rownames(a3), a3[, "Df"])
      }
    }
  }
}
write.csv(do.call(rbind, out), args[2], row.names = FALSE)
