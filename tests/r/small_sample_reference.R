# Reference values for analyses.gee.small_sample from R's clubSandwich, computed independently of Python.
#
# Usage: Rscript tests/r/small_sample_reference.R FIXTURE_DIR OUT.csv
#
# For each data set -- geepack's ohio and respiratory (FIXTURE_DIR/datasets/*.csv, written by
# tests/r/export_datasets.R) and the toolkit's fitted rows
# FIXTURE_DIR/analyses/small_sample_rows.csv), fits glm(binomial) -- the independence GEE --
# and writes clubSandwich's vcovCR(fit, cluster, type = "CR2") and
# Wald_test(fit, constraints, vcov = "CR2", test = c("HTZ", "Naive-Fp")) for named
# constraints.  OUT.csv: data, quantity, name, value (17 significant digits).
suppressPackageStartupMessages({
  library(clubSandwich)
  library(geepack)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2) stop("usage: Rscript small_sample_reference.R FIXTURE_DIR OUT.csv")
dir <- args[1]
read_fixture <- function(name) read.csv(file.path(dir, name), comment.char = "#",
                                        stringsAsFactors = FALSE)
out <- list()
put <- function(data, quantity, name, value) {
  out[[length(out) + 1]] <<- data.frame(data = data, quantity = quantity, name = name,
                                        value = sprintf("%.17g", value))
}
run <- function(label, d, formula, cluster, constraints) {
  # a tight epsilon: glm keeps the working weights of its last-but-one iterate (cov.unscaled)
  fit <- glm(formula, family = binomial, data = d, control = glm.control(epsilon = 1e-15, maxit = 100))
  v <- vcovCR(fit, cluster = d[[cluster]], type = "CR2")
  b <- coef(fit)
  put(label, "coef", names(b), b)
  nm <- outer(rownames(v), colnames(v), paste, sep = "|")
  put(label, "cr2", as.vector(nm), as.vector(as.matrix(v)))
  for (cn in names(constraints)) {
    idx <- grep(constraints[[cn]], names(b))
    w <- Wald_test(fit, constraints = constrain_zero(idx), vcov = v,
                   test = c("HTZ", "Naive-Fp"))
    for (k in seq_len(nrow(w))) {
      put(label, paste0(w$test[k], "_F"), cn, w$Fstat[k])
      put(label, paste0(w$test[k], "_df_num"), cn, w$df_num[k])
      put(label, paste0(w$test[k], "_df_denom"), cn, w$df_denom[k])
      put(label, paste0(w$test[k], "_p"), cn, w$p_val[k])
    }
  }
}
ohio <- read_fixture(file.path("datasets", "ohio.csv"))
run("ohio", ohio, resp ~ age * smoke, "id",
    list(age = "^age$", smoke = "^smoke$", all = "age|smoke"))
resp <- read_fixture(file.path("datasets", "respiratory.csv"))
resp$cluster <- paste(resp$center, resp$id, sep = "-")  # ids restart in each centre
resp$center <- factor(resp$center)
run("respiratory", resp, outcome ~ center + treat + sex + age + baseline + visit, "cluster",
    list(treat = "^treat", center = "^center", sex_age = "^sex|^age", visit = "^visit"))
rows <- read_fixture(file.path("analyses", "small_sample_rows.csv"))
for (v in c("model", "dataset_type", "category")) {
  rows[[v]] <- factor(rows[[v]], levels = sort(unique(rows[[v]]), method = "radix"))
}
run("toolkit", rows, agree ~ model + dataset_type * category + model:category, "cluster",
    list(dataset_type = "^dataset_typesubjective$", `dataset_type:category` = "^dataset_type.*:category"))
res <- do.call(rbind, out)
write.csv(res, args[2], row.names = FALSE)
