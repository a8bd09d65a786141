"""What the rule layer's targets tell each other."""

CargoInfo = provider(
    doc = "The artifacts of one cargo_workspace action, by crate.",
    fields = {
        "crates": "dict: crate (package) name -> dict: artifact -> File, where artifact is " +
                  "\"cdylib\", \"bin:NAME\" or \"test:NAME\" (\"test:lib\" for the library's unit tests)",
        "argv": "the driver's command line (its key carries the pinned rustc version)",
        "rustc_version": "the toolchain version it pins",
    },
)
