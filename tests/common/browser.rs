//! Headless Chromium for tests that look at a page as a person would: run it on a page
//! (DOM dump, screenshot), decode the PNG it writes, count pixels of a colour.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{describe, run_with_timeout};

/// Chromium starts slowly on a loaded 2-core machine; this only bounds a hung browser.
pub const CHROMIUM_DEADLINE: Duration = Duration::from_secs(180);

/// `chromium` (or `chromium-browser`) on PATH, if installed.
pub fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Chromium for a test that looks at `what`, or `None` (with a printed reason) where it is
/// not installed. Under CI (`CI` set), which installs it, a missing Chromium is a failure.
pub fn chromium_for(what: &str) -> Option<PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "no chromium on PATH (Debian package `chromium`); .ci/run installs it"
        );
        println!(
            "SKIPPED: no chromium on PATH (Debian package `chromium`); {what} was not checked in a browser"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `extra` arguments, in a fresh profile; returns its
/// standard output. Panics with what it printed if it fails or outlives the deadline.
pub fn run_chromium(
    chromium: &Path,
    dir: &Path,
    name: &str,
    extra: &[String],
    page: &Path,
) -> String {
    let profile = dir.join(format!("profile-{name}"));
    fs::create_dir_all(&profile).expect("create profile dir");
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    let out = run_with_timeout(cmd, CHROMIUM_DEADLINE);
    assert!(
        out.status.success(),
        "chromium {name} failed\n{}",
        describe(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The reports' screenshot size: wide enough for the tables, tall enough for the charts.
pub const WINDOW: (u32, u32) = (1280, 2400);

/// Screenshots `page` at [`WINDOW`] into `dir/report.png` and returns its pixels, after
/// checking the size and that the page is not (nearly) blank.
pub fn screenshot_not_blank(chromium: &Path, dir: &Path, page: &Path) -> Vec<[u8; 3]> {
    let png_path = dir.join("report.png");
    run_chromium(
        chromium,
        dir,
        "screenshot",
        &[
            format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            format!("--screenshot={}", png_path.display()),
        ],
        page,
    );
    let (width, height, pixels) = decode_png(&fs::read(&png_path).expect("screenshot written"));
    assert_eq!((width, height), WINDOW);
    let first = pixels[0];
    let distinct = pixels.iter().filter(|p| **p != first).count();
    assert!(
        distinct > pixels.len() / 100,
        "the screenshot is (nearly) blank"
    );
    pixels
}

/// An 8-bit RGB or RGBA, non-interlaced PNG decoded to RGB pixels: (width, height, pixels).
pub fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = be32(&bytes[at..]) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = be32(data);
                height = be32(&data[4..]);
                let (depth, colour, interlace) = (data[8], data[9], data[12]);
                assert_eq!((depth, interlace), (8, 0), "unexpected PNG layout");
                channels = match colour {
                    2 => 3,
                    6 => 4,
                    other => panic!("unexpected PNG colour type {other}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => break,
            _ => {}
        }
        at += 12 + len; // length, type, data, CRC
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("inflate PNG data");
    let stride = width as usize * channels;
    assert_eq!(raw.len(), (stride + 1) * height as usize, "PNG data size");
    let mut image = vec![0u8; stride * height as usize];
    for y in 0..height as usize {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= channels {
                image[y * stride + x - channels]
            } else {
                0
            };
            let b = if y > 0 {
                image[(y - 1) * stride + x]
            } else {
                0
            };
            let c = if x >= channels && y > 0 {
                image[(y - 1) * stride + x - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => {
                    let p = a as i16 + b as i16 - c as i16;
                    let (pa, pb, pc) = (
                        (p - a as i16).abs(),
                        (p - b as i16).abs(),
                        (p - c as i16).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("bad PNG filter {other}"),
            };
            image[y * stride + x] = line[x].wrapping_add(predicted);
        }
    }
    let pixels = image
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (width, height, pixels)
}

pub fn hex_colour(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).expect("hex colour");
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Pixels within a small distance of `colour` (anti-aliasing blends line edges).
pub fn pixels_near(pixels: &[[u8; 3]], colour: [u8; 3]) -> usize {
    pixels
        .iter()
        .filter(|p| (0..3).all(|i| (p[i] as i16 - colour[i] as i16).abs() <= 24))
        .count()
}
