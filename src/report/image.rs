//! SVG documents to PNG files (resvg, system fonts): shared by every chart writer.

use crate::error::{Error, Result};
use std::path::Path;

/// Rasterizes an SVG document into a PNG file.
pub fn write_png(svg: &str, path: &Path) -> Result<()> {
    let fail =
        |e: String| Error::runtime(format!("cannot write the chart {}: {e}", path.display()));
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| fail(e.to_string()))?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| fail("empty image".into()))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.save_png(path).map_err(|e| fail(e.to_string()))
}
