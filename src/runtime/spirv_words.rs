//! Reading a SPIR-V module's words, for the probe of `vulkan_check`. Plain
//! Rust, so that its tests run in every build.

use std::collections::HashMap;

/// Whether every `Workgroup` `OpVariable` of the SPIR-V `module` has a pointer to a non-pointer
/// type as its type (SPIR-V's rule; 0.11.3 gives it a pointer to a pointer).
pub(crate) fn workgroup_variables_are_pointers(module: &[u32]) -> bool {
    const OP_TYPE_POINTER: u32 = 32;
    const OP_VARIABLE: u32 = 59;
    const WORKGROUP: u32 = 4;
    let mut pointers = HashMap::new(); // result id → pointee type id
    let mut variable_types = Vec::new();
    let mut at = 5; // past the header
    while at < module.len() {
        let (count, opcode) = ((module[at] >> 16) as usize, module[at] & 0xffff);
        let Some(operands) = module.get(at + 1..at + count.max(1)) else {
            return false;
        };
        match (opcode, operands) {
            (OP_TYPE_POINTER, [id, _, pointee, ..]) => {
                pointers.insert(*id, *pointee);
            }
            (OP_VARIABLE, [ty, _, WORKGROUP, ..]) => variable_types.push(*ty),
            _ => {}
        }
        at += count.max(1);
    }
    variable_types.iter().all(|ty| {
        pointers
            .get(ty)
            .is_some_and(|pointee| !pointers.contains_key(pointee))
    })
}

#[cfg(test)]
mod tests {
    use super::workgroup_variables_are_pointers;

    /// A module of `words` after a 5-word header.
    fn module(words: &[u32]) -> Vec<u32> {
        let mut module = vec![0x0723_0203, 0x0001_0000, 0, 16, 0];
        module.extend_from_slice(words);
        module
    }

    const POINTER: u32 = (4 << 16) | 32;
    const VARIABLE: u32 = (4 << 16) | 59;

    #[test]
    fn reads_the_workgroup_variables_types() {
        // %3 = OpTypePointer Workgroup %2; %4 = OpVariable %3 Workgroup.
        let right = module(&[POINTER, 3, 4, 2, VARIABLE, 3, 4, 4]);
        assert!(workgroup_variables_are_pointers(&right));
        // 0.11.3's form: the variable's type points to a pointer.
        let wrong = module(&[POINTER, 3, 4, 2, POINTER, 5, 4, 3, VARIABLE, 5, 6, 4]);
        assert!(!workgroup_variables_are_pointers(&wrong));
        // Not a pointer at all, and a truncated module.
        assert!(!workgroup_variables_are_pointers(&module(&[
            VARIABLE, 2, 6, 4
        ])));
        assert!(!workgroup_variables_are_pointers(&module(&[POINTER, 3, 4])));
        // Variables of other storage classes are not looked at.
        assert!(workgroup_variables_are_pointers(&module(&[
            VARIABLE, 2, 6, 12
        ])));
    }
}
