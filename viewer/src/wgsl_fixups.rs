//! What CubeCL's WGSL needs before a browser compiles it. CubeCL writes WGSL for wgpu's naga,
//! which accepts two things browsers' WGSL compilers refuse: `atomic<f32>` (a naga extension;
//! WGSL has integer atomics only), which the per-site sums' global adds use, and so the
//! one-element placeholders CubeCL declares for the table forms a kernel does not use.

/// The module as a browser compiles it: unused `var<workgroup>` declarations dropped, and f32
/// storage atomics emulated on `atomic<u32>` words (loads and stores of the bits, adds as a
/// compare-exchange loop, as CubeCL's own `TableSums::Bits` adds in shared memory). Fails on an
/// f32 atomic it does not know how to emulate.
pub(super) fn for_browsers(wgsl: &str) -> Result<String, String> {
    let kept = without_unused_workgroup_vars(wgsl);
    emulate_f32_atomics(&kept)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// How often `name` occurs in `text` as a whole word.
fn occurrences(text: &str, name: &str) -> usize {
    text.match_indices(name)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
        .count()
}

fn without_unused_workgroup_vars(wgsl: &str) -> String {
    wgsl.lines()
        .filter(|line| {
            let declared = line
                .strip_prefix("var<workgroup> ")
                .and_then(|rest| rest.split(':').next());
            declared.is_none_or(|name| occurrences(wgsl, name.trim()) > 1)
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The pointer a `let NAME = &EXPR;` line binds, if EXPR is `BASE` or `(*BASE)[…]` for a
/// name in `bases`.
fn derived_pointer<'a>(line: &'a str, bases: &[String]) -> Option<&'a str> {
    let rest = line.trim().strip_prefix("let ")?;
    let (name, value) = rest.split_once(" = &")?;
    let value = value.strip_suffix(';')?;
    let base = value
        .strip_prefix("(*")
        .and_then(|v| v.split(')').next())
        .unwrap_or(value);
    bases.iter().any(|b| b == base).then_some(name)
}

/// The `(pointer, value)` arguments of the first `call(` in `line`.
fn call_args<'a>(line: &'a str, call: &str) -> Option<(usize, &'a str, &'a str, usize)> {
    let start = line.find(call)?;
    let inner = &line[start + call.len()..];
    let close = inner.find(')')?;
    let (pointer, value) = inner[..close].split_once(", ")?;
    Some((start, pointer, value, start + call.len() + close + 1))
}

fn emulate_f32_atomics(wgsl: &str) -> Result<String, String> {
    const F32_ARRAY: &str = "array<atomic<f32>>";
    let mut pointers: Vec<String> = Vec::new();
    let mut out = String::with_capacity(wgsl.len());
    for line in wgsl.lines() {
        if line.contains("var<storage") && line.contains(F32_ARRAY) {
            let name = line
                .split("> ")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .ok_or_else(|| format!("an f32 atomic buffer declared as `{line}`"))?;
            pointers.push(name.trim().to_string());
            out.push_str(&line.replace(F32_ARRAY, "array<atomic<u32>>"));
            out.push('\n');
            continue;
        }
        if line.contains("atomic<f32>") {
            return Err(format!("no emulation for the f32 atomic of `{line}`"));
        }
        if let Some(name) = derived_pointer(line, &pointers) {
            pointers.push(name.to_string());
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let ours = |pointer: &str| pointers.iter().any(|p| p == pointer);
        let rewritten = if let Some((_, pointer, value, _)) =
            call_args(line, "atomicAdd(").filter(|(_, pointer, _, _)| ours(pointer))
        {
            // `let R = atomicAdd(P, V);`: R is the value before the add.
            let result = line
                .trim()
                .strip_prefix("let ")
                .and_then(|rest| rest.split(" = atomicAdd(").next())
                .filter(|_| line.trim_end().ends_with(");"))
                .ok_or_else(|| format!("an f32 atomic add used as `{line}`"))?;
            format!(
                "var {result}_bits = atomicLoad({pointer});\n\
                 loop {{\n\
                 let {result}_swap = atomicCompareExchangeWeak({pointer}, {result}_bits, \
                 bitcast<u32>(bitcast<f32>({result}_bits) + {value}));\n\
                 if {result}_swap.exchanged {{ break; }}\n\
                 {result}_bits = {result}_swap.old_value;\n\
                 }}\n\
                 let {result} = bitcast<f32>({result}_bits);"
            )
        } else if let Some((start, pointer, value, end)) =
            call_args(line, "atomicStore(").filter(|(_, pointer, _, _)| ours(pointer))
        {
            format!(
                "{}atomicStore({pointer}, bitcast<u32>({value})){}",
                &line[..start],
                &line[end..]
            )
        } else if let Some(start) = line.find("atomicLoad(") {
            let inner = &line[start + "atomicLoad(".len()..];
            let close = inner.find(')').unwrap_or(inner.len());
            match ours(&inner[..close]) {
                true => format!(
                    "{}bitcast<f32>(atomicLoad({})){}",
                    &line[..start],
                    &inner[..close],
                    &inner[close + 1..]
                ),
                false => line.to_string(),
            }
        } else {
            let other = ["atomicSub(", "atomicMax(", "atomicMin(", "atomicExchange("]
                .iter()
                .find_map(|call| call_args(line, call).filter(|(_, p, _, _)| ours(p)));
            if other.is_some() {
                return Err(format!("no emulation for the f32 atomic of `{line}`"));
            }
            line.to_string()
        };
        out.push_str(&rewritten);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "@group(0) @binding(3) var<storage, read_write> v19: array<atomic<f32>>;
@group(0) @binding(4) var<storage, read_write> v20: array<atomic<u32>>;
var<workgroup> shared_v45: array<atomic<f32>, 1>;
var<workgroup> shared_v46: array<atomic<u32>, 256>;
fn main() {
let v8 = &v19;
let v9 = &(*v8)[v3];
atomicStore(v9, v67);
let v10 = atomicAdd(v9, v66);
let v11 = atomicLoad(v9) + 1.0;
let v12 = &(*v8)[v4];
let v13 = atomicAdd(&v20[0], 1u);
let v14 = atomicLoad(&shared_v46[0]);
}
";

    #[test]
    fn f32_atomics_become_compare_exchange_loops_on_u32_words() {
        let wgsl = for_browsers(MODULE).unwrap();
        assert!(!wgsl.contains("atomic<f32>"), "{wgsl}");
        assert!(!wgsl.contains("shared_v45"), "{wgsl}");
        assert!(wgsl.contains("shared_v46: array<atomic<u32>, 256>"));
        assert!(wgsl.contains("v19: array<atomic<u32>>;"));
        assert!(wgsl.contains("atomicStore(v9, bitcast<u32>(v67));"));
        assert!(wgsl.contains(
            "let v10_swap = atomicCompareExchangeWeak(v9, v10_bits, \
             bitcast<u32>(bitcast<f32>(v10_bits) + v66));"
        ));
        assert!(wgsl.contains("let v10 = bitcast<f32>(v10_bits);"));
        assert!(wgsl.contains("let v11 = bitcast<f32>(atomicLoad(v9)) + 1.0;"));
        // Integer atomics stay as they are.
        assert!(wgsl.contains("let v13 = atomicAdd(&v20[0], 1u);"));
        assert!(wgsl.contains("let v14 = atomicLoad(&shared_v46[0]);"));
    }

    #[test]
    fn unknown_f32_atomics_are_refused() {
        let module = MODULE.replace("atomicAdd(v9, v66)", "atomicMax(v9, v66)");
        assert!(for_browsers(&module).unwrap_err().contains("atomicMax"));
        let module = MODULE.replace("let v10 = atomicAdd(v9, v66);", "atomicAdd(v9, v66);");
        assert!(for_browsers(&module).unwrap_err().contains("atomicAdd"));
    }
}
