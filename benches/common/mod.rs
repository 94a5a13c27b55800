//! The synthetic layer the benches build on: a manifest and rules of about 1.5 KB each, written
//! into a temporary directory. Shared by the benches that index it (`index`, `cockpit`).

use std::path::Path;

pub const MANIFEST: &str = "schema: ai-repository/v1\nsections:\n  repo: repo\n  local: local\n";

/// About a kilobyte of body text, so a rule with its front matter comes to about 1.5 KB.
pub const BODY: &str = "## Why\n\nSeveral people and agents edit the same tree at the same time. A change that does not \
build, or that only builds with warnings, turns every later bisect and every parallel branch into \
archaeology. A file that does not say what it is for gets edited by someone who guessed.\n\n\
## How to comply\n\n- Run the formatter, the linter with warnings denied, and the whole test suite.\n\
- Open every source file with a line saying what it owns and what it must not know.\n\
- Name things for what they are; comment on why, not on what.\n\
- Keep the commit small enough to review in one sitting, and say honestly what it does.\n\n\
## Exceptions\n\nNone. A failing check is fixed before the commit, not after it; a flaky test is a \
bug to fix, never a reason to skip the suite. When in doubt, ask in the review.\n\n\
## See also\n\nThe rule on typed errors, the rule on reads that never write, and the decision record \
that made the registry the only declaration of a capability; each explains a part of why this one \
exists and what it protects.\n";

/// Writes the manifest and `count` rules, the `i`th being `rule(i)`, under `.ai/repo/rules/`
/// in directories of 500; returns the bytes written.
pub fn write_rules(root: &Path, count: usize, rule: impl Fn(usize) -> String) -> u64 {
    let mut bytes = MANIFEST.len() as u64;
    std::fs::create_dir_all(root.join(".ai")).expect("create .ai");
    std::fs::write(root.join(".ai/manifest.yaml"), MANIFEST).expect("write the manifest");
    for i in 0..count {
        let dir = root.join(format!(".ai/repo/rules/group-{:03}", i / 500));
        if i % 500 == 0 {
            std::fs::create_dir_all(&dir).expect("create a rule directory");
        }
        let text = rule(i);
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("rule-{i:05}.md")), text).expect("write a rule");
    }
    bytes
}
