//! The preflight report as a terminal reads it: one line per check with its remedy under it,
//! then each client's files, skills and cost. Rendered from the answer itself, so the text and
//! the JSON cannot disagree.

use serde_json::Value;

/// The report `answer` (an `environment.preflight` answer) as text.
pub fn render(answer: &Value) -> String {
    let mut out = String::new();
    let counts = &answer["counts"];
    out.push_str(&format!(
        "majordomus doctor: {} ({} ok, {} warn, {} fail)\n\n",
        answer["status"].as_str().unwrap_or("?"),
        counts["ok"],
        counts["warn"],
        counts["fail"]
    ));
    let checks = answer["checks"].as_array().map_or(&[][..], Vec::as_slice);
    let width = checks
        .iter()
        .filter_map(|c| c["id"].as_str())
        .map(str::len)
        .max()
        .unwrap_or(0);
    for c in checks {
        out.push_str(&format!(
            "  {:<4}  {:<width$}  {}\n",
            c["status"].as_str().unwrap_or("?"),
            c["id"].as_str().unwrap_or_default(),
            c["seen"].as_str().unwrap_or_default(),
        ));
        if c["status"] != "ok" {
            if let Some(remedy) = c["remedy"].as_str() {
                for (i, line) in remedy.lines().enumerate() {
                    let lead = if i == 0 { "→ " } else { "  " };
                    out.push_str(&format!("  {:<4}  {:<width$}  {lead}{line}\n", "", ""));
                }
            }
        }
    }
    for client in answer["clients"].as_array().map_or(&[][..], Vec::as_slice) {
        let wiring = &client["wiring"];
        // An absent configuration with a reason is one that is there and was refused unread.
        let standing = match wiring["standing"].as_str().unwrap_or_default() {
            "absent" if wiring["reason"].is_string() => "refused unread",
            other => other,
        };
        out.push_str(&format!(
            "\n{} ({} era): {} {}; approval {}: {}\n",
            client["name"].as_str().unwrap_or_default(),
            client["era"].as_str().unwrap_or_default(),
            wiring["config"].as_str().unwrap_or_default(),
            standing,
            client["approval"]["state"].as_str().unwrap_or_default(),
            client["approval"]["seen"].as_str().unwrap_or_default(),
        ));
        for (label, key) in [("loads", "loads"), ("ignores", "ignores")] {
            for f in client[key].as_array().map_or(&[][..], Vec::as_slice) {
                out.push_str(&format!(
                    "  {label:<7}  {}: {}\n",
                    f["path"].as_str().unwrap_or_default(),
                    f["why"].as_str().unwrap_or_default()
                ));
            }
        }
        let skills: Vec<String> = client["skills"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|s| {
                format!(
                    "{} ({})",
                    s["directory"].as_str().unwrap_or_default(),
                    s["skills"]
                )
            })
            .collect();
        out.push_str(&format!("  skills   {}\n", skills.join(", ")));
        let cost = &client["cost"];
        let tokens = |k: &str| cost[k]["tokens"].as_i64().unwrap_or(0);
        out.push_str(&format!(
            "  cost     {} tokens: tools/list {} ({} bytes), instructions {} ({} bytes)\n",
            tokens("tools_list") + tokens("instructions"),
            tokens("tools_list"),
            cost["tools_list"]["bytes"],
            tokens("instructions"),
            cost["instructions"]["bytes"],
        ));
        let model = &client["model"];
        let of = |k: &str| model[k]["tokens"].as_i64().unwrap_or(0);
        let toolsets: Vec<&str> = model["toolsets"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        out.push_str(&format!(
            "  model    {} tokens: toolset {} from the {} ({} bytes), instructions {} bytes{}\n",
            of("tools") + of("instructions"),
            toolsets.join(","),
            model["source"].as_str().unwrap_or_default(),
            model["tools"]["bytes"],
            model["instructions"]["bytes"],
            model["instructions_cut"]
                .as_i64()
                .map_or(String::new(), |c| format!(" (cut at {c} characters)")),
        ));
    }
    out
}
