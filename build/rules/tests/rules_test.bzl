"""Analysis tests of the cargo rule layer: the cargo action's key carries the toolchain, and its
provider lists artifacts by crate."""

load("@ferrule_host//:toolchain.bzl", "HOST")
load("//build/rules:defs.bzl", "CargoInfo")

def _cargo_action_key_test_impl(ctx):
    target = ctx.attr.target_under_test
    cargo = [a for a in target.actions if a.mnemonic == "Cargo"]
    errors = []
    if len(cargo) != 1:
        errors.append("expected exactly one Cargo action in %s, found %d" % (target.label, len(cargo)))
    else:
        argv = cargo[0].argv
        want = "--rustc-version=" + ctx.attr.rustc_version
        if want not in argv:
            errors.append("the cargo action's command line lacks %s (a toolchain upgrade would not change its key): %s" % (want, argv))
        if HOST["RUSTC_VERSION"] != ctx.attr.rustc_version:
            errors.append("@ferrule_host reports rustc %s, rust-toolchain.toml pins %s" % (HOST["RUSTC_VERSION"], ctx.attr.rustc_version))
        inputs = [f.basename for f in cargo[0].inputs.to_list()]
        for needed in ctx.attr.required_inputs:
            if needed not in inputs:
                errors.append("%s is not an input of the cargo action" % needed)
    return [AnalysisTestResultInfo(success = not errors, message = "\n".join(errors) or "cargo action key carries rustc %s" % ctx.attr.rustc_version)]

cargo_action_key_test = rule(
    implementation = _cargo_action_key_test_impl,
    analysis_test = True,
    attrs = {
        "target_under_test": attr.label(mandatory = True),
        "rustc_version": attr.string(mandatory = True),
        "required_inputs": attr.string_list(),
    },
)

def _cargo_info_test_impl(ctx):
    crates = ctx.attr.target_under_test[CargoInfo].crates
    errors = []
    for crate, kinds in ctx.attr.expected.items():
        if crate not in crates:
            errors.append("CargoInfo lists no crate %s (it lists %s)" % (crate, sorted(crates)))
            continue
        for kind in kinds:
            if kind not in crates[crate]:
                errors.append("CargoInfo lists no %s for %s (it lists %s)" % (kind, crate, sorted(crates[crate])))
    return [AnalysisTestResultInfo(success = not errors, message = "\n".join(errors) or "artifacts listed by crate")]

cargo_info_test = rule(
    implementation = _cargo_info_test_impl,
    analysis_test = True,
    attrs = {
        "target_under_test": attr.label(mandatory = True),
        "expected": attr.string_list_dict(),
    },
)
