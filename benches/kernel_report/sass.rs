//! `cuobjdump -sass` listings: instructions by class, and the loops their backward branches
//! close.

use std::collections::BTreeMap;

/// The classes the report counts, in its column order.
pub const CLASSES: [&str; 10] = [
    "float", "lds", "sts", "ldg", "stg", "int", "move", "plane", "uniform", "ctrl",
];

/// One instruction: its address and class.
struct Instruction {
    address: u64,
    class: &'static str,
}

/// A loop: the instructions from its header to the backward branch that closes it.
#[derive(Clone, Copy)]
struct Loop {
    start: u64,
    end: u64,
}

/// The one kernel function of a listing.
pub struct Sass {
    instructions: Vec<Instruction>,
    loops: Vec<Loop>,
}

/// The class of an opcode (with its modifiers, `IMAD.MOV.U32`).
fn class_of(opcode: &str) -> &'static str {
    let base = opcode.split('.').next().unwrap_or(opcode);
    match base {
        "IMAD" if opcode.starts_with("IMAD.MOV") => "move",
        "MOV" | "S2R" | "CS2R" | "S2UR" | "R2UR" | "P2R" | "R2P" | "MOVM" => "move",
        "LDS" | "LDSM" => "lds",
        "STS" | "ATOMS" => "sts",
        "LDG" | "LD" | "LDL" | "LDC" | "LDGSTS" | "LDGDEPBAR" => "ldg",
        "STG" | "ST" | "STL" | "RED" | "ATOM" | "ATOMG" => "stg",
        "SHFL" | "VOTE" | "MATCH" | "REDUX" => "plane",
        "BRA" | "BRX" | "JMP" | "BAR" | "EXIT" | "BSSY" | "BSYNC" | "WARPSYNC" | "CALL" | "RET"
        | "BPT" | "YIELD" | "NANOSLEEP" | "DEPBAR" | "MEMBAR" | "ERRBAR" | "CCTL" | "BMOV"
        | "BREAK" | "KILL" | "ELECT" | "FENCE" => "ctrl",
        _ if base.starts_with('U') => "uniform",
        _ if base.starts_with('F') && base != "FLO"
            || base.starts_with('H')
            || base.starts_with('D') =>
        {
            "float"
        }
        "MUFU" | "I2F" | "F2I" | "I2FP" | "F2FP" => "float",
        _ => "int",
    }
}

impl Sass {
    /// The instructions of the one function in `listing`, padding (`NOP`s and the final
    /// branch to itself) left out.
    pub fn parse(listing: &str) -> Result<Self, String> {
        let functions = listing.matches("Function :").count();
        if functions != 1 {
            return Err(format!(
                "expected one function in the listing, found {functions}"
            ));
        }
        let mut instructions = Vec::new();
        let mut loops: Vec<Loop> = Vec::new();
        for line in listing.lines() {
            let Some(rest) = line.trim().strip_prefix("/*") else {
                continue;
            };
            let Some((address, text)) = rest.split_once("*/") else {
                continue;
            };
            let Ok(address) = u64::from_str_radix(address.trim(), 16) else {
                continue;
            };
            let Some((text, _)) = text.split_once(';') else {
                continue;
            };
            let mut words = text.split_whitespace();
            let mut opcode = words.next().unwrap_or("");
            if opcode.starts_with('@') {
                opcode = words.next().unwrap_or("");
            }
            if opcode.is_empty() || opcode == "NOP" {
                continue;
            }
            if opcode.starts_with("BRA") {
                let target = words
                    .find_map(|word| word.trim_start_matches('`').strip_prefix("0x"))
                    .and_then(|hex| u64::from_str_radix(hex.trim_end_matches([')', ',']), 16).ok());
                match target {
                    // The padding after the last EXIT: a branch to itself.
                    Some(target) if target == address => continue,
                    Some(target) if target < address => {
                        match loops.iter_mut().find(|l| l.start == target) {
                            Some(existing) => existing.end = existing.end.max(address),
                            None => loops.push(Loop {
                                start: target,
                                end: address,
                            }),
                        }
                    }
                    _ => {}
                }
            }
            instructions.push(Instruction {
                address,
                class: class_of(opcode),
            });
        }
        if instructions.is_empty() {
            return Err("no instructions in the listing".to_string());
        }
        Ok(Self {
            instructions,
            loops,
        })
    }

    /// Instructions in the function.
    pub fn static_count(&self) -> usize {
        self.instructions.len()
    }

    /// How many loops enclose the instruction at `address`.
    fn depth_of(&self, address: u64) -> usize {
        self.loops
            .iter()
            .filter(|l| l.start <= address && address <= l.end)
            .count()
    }

    /// The deepest nesting of loops.
    pub fn depth(&self) -> usize {
        self.instructions
            .iter()
            .map(|instruction| self.depth_of(instruction.address))
            .max()
            .unwrap_or(0)
    }

    /// Instructions one unit executes, by class, where the loops `trips` deep (outermost first)
    /// each run their count and every other instruction once: branches are taken as if every
    /// unit ran every path, so this is an upper bound for code behind a guard.
    pub fn executed(&self, trips: &[usize]) -> BTreeMap<&'static str, f64> {
        let mut classes = BTreeMap::new();
        for instruction in &self.instructions {
            let depth = self.depth_of(instruction.address);
            let weight: f64 = trips
                .iter()
                .take(depth)
                .map(|&trips| trips as f64)
                .product();
            *classes.entry(instruction.class).or_insert(0.0) += weight;
        }
        classes
    }
}
