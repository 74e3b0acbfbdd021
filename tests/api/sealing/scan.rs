//! Looking for PHI in a data directory the way someone holding a copy of it would: every file, raw, inside
//! every zstd frame, and for audio in the clear.

use std::io::Read;
use std::path::{Path, PathBuf};

/// zstd's frame magic number, little-endian on disk.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// What of `markers` the bytes reveal: raw, or inside any zstd frame starting anywhere in them.
pub fn revealed<'a>(bytes: &[u8], markers: &'a [String]) -> Vec<&'a str> {
    let mut texts = vec![bytes.to_vec()];
    for at in find_all(bytes, &ZSTD_MAGIC) {
        let mut decoder = match zstd::stream::read::Decoder::new(&bytes[at..]) {
            Ok(decoder) => decoder.single_frame(),
            Err(_) => continue,
        };
        let mut out = Vec::new();
        // A frame cut short or a false magic still yields what decoded before the error.
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match decoder.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
            if out.len() > 64 << 20 {
                break;
            }
        }
        texts.push(out);
    }
    markers
        .iter()
        .filter(|m| texts.iter().any(|t| contains(t, m.as_bytes())))
        .map(String::as_str)
        .collect()
}

/// Whether the bytes hold a WAV file in the clear.
pub fn holds_plain_riff(bytes: &[u8]) -> bool {
    find_all(bytes, b"RIFF").any(|at| bytes.get(at + 8..at + 12) == Some(b"WAVE"))
}

/// Every marker any file under `dir` reveals, with the file.
pub fn scan(dir: &Path, markers: &[String]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    for file in files_under(dir) {
        let bytes = std::fs::read(&file).unwrap();
        for marker in revealed(&bytes, markers) {
            found.push((file.clone(), marker.to_owned()));
        }
        if holds_plain_riff(&bytes) {
            found.push((file.clone(), "RIFF/WAVE audio".to_owned()));
        }
    }
    found
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(|(at, _)| at)
}

#[test]
fn the_scanner_finds_a_marker_raw_inside_a_zstd_frame_and_a_plain_wav() {
    let markers = vec!["Qzmarkerxyz".to_owned()];
    // Long enough text that zstd codes its literals (short ones it stores as they are).
    let text: String = (0..400)
        .map(|i| {
            format!(
                "{{\"patientLastName\":\"Qzmarkerxyz\",\"n\":{}}}",
                i * 7919 % 1009
            )
        })
        .collect();
    let mut bytes = b"junk".to_vec();
    bytes.extend(zstd::bulk::compress(text.as_bytes(), 1).unwrap());
    assert!(!contains(&bytes, b"Qzmarkerxyz"), "compressed, not raw");
    assert_eq!(revealed(&bytes, &markers), vec!["Qzmarkerxyz"]);
    assert_eq!(revealed(b"..Qzmarkerxyz..", &markers), vec!["Qzmarkerxyz"]);
    assert!(revealed(b"nothing here", &markers).is_empty());
    assert!(holds_plain_riff(b"xxRIFF\x24\x00\x00\x00WAVEfmt "));
}
