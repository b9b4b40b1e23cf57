//! VIEW models: the physics is a view, so it is always current and costs nothing to build.

use super::SqlDialect;

/// Create the view at `physical` over `select`.
pub fn create(d: &dyn SqlDialect, physical: &str, select: &str) -> String {
    d.replace_view(physical, select)
}
