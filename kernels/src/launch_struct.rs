//! [`launch_struct!`]: a kernel family's runtime scalars as one launch argument, its field list
//! written once.

/// Declares a struct of runtime scalars that kernels take as one argument
/// (`#[derive(CubeLaunch, CubeType)]`), with, generated from the same field list:
/// - `FIELDS`: each field's name and scalar type, in order (how the viewer's WGSL export lists
///   the argument, so that a host binds the scalars it takes the place of);
/// - `launch_arg(&self)`: the argument of a launch;
/// - `compilation_arg()`: the argument of a kernel's compilation (scalars compile to no value).
///
/// Adding a field to the list adds it to all three. The `Launch` and `CompilationArg` types
/// CubeCL derives are named after the struct, and are given to the macro by name.
macro_rules! launch_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident ($launch:ident, $compilation:ident) {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ident,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(CubeLaunch, CubeType, Clone, Copy, Debug, PartialEq)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $name {
            /// The fields in order, with the scalar type a host binds each as: how the viewer's
            /// export lists this argument.
            pub const FIELDS: &'static [(&'static str, &'static str)] =
                &[$((stringify!($field), stringify!($ty))),*];

            /// The argument of a launch.
            pub fn launch_arg(&self) -> $launch {
                $launch::new($(self.$field),*)
            }

            /// The argument of a kernel's compilation (its scalars compile to no value).
            pub fn compilation_arg() -> $compilation {
                $compilation { $($field: ()),* }
            }
        }
    };
}
