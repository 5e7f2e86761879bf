//! Render finished results: the text table, JSON and HDR histogram files.
