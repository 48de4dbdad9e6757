//! Small valid files for the operations whose answer is not JSON (WB's and Ozon's PDF labels and
//! acts, ZIP reports, PNG barcodes, Yandex Market's JPEG photos and XLSX acts, Apify's plain-text
//! logs): a client that opens the file, not only reads its bytes, gets one of the declared type.

use serde_json::Value;

/// A one-page PDF (3×3 pt), with its cross-reference table.
const PDF: &[u8] = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 3 3]>>endobj\nxref\n0 4\n0000000000 65535 f \n0000000009 00000 n \n0000000052 00000 n \n0000000101 00000 n \ntrailer<</Size 4/Root 1 0 R>>\nstartxref\n160\n%%EOF\n";

/// An empty ZIP archive: its end-of-central-directory record alone.
const ZIP: &[u8] = &[
    0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// A 1×1 transparent PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0b, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x60, 0x00, 0x02, 0x00,
    0x00, 0x05, 0x00, 0x01, 0xe9, 0xfa, 0xdc, 0xd8, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
];

/// A 1×1 grey baseline JPEG.
const JPEG: &[u8] = &[
    0xff, 0xd8, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x03, 0x02, 0x02, 0x02, 0x02, 0x02, 0x03, 0x02, 0x02,
    0x02, 0x03, 0x03, 0x03, 0x03, 0x04, 0x06, 0x04, 0x04, 0x04, 0x04, 0x04, 0x08, 0x06, 0x06, 0x05,
    0x06, 0x09, 0x08, 0x0a, 0x0a, 0x09, 0x08, 0x09, 0x09, 0x0a, 0x0c, 0x0f, 0x0c, 0x0a, 0x0b, 0x0e,
    0x0b, 0x09, 0x09, 0x0d, 0x11, 0x0d, 0x0e, 0x0f, 0x10, 0x10, 0x11, 0x10, 0x0a, 0x0c, 0x12, 0x13,
    0x12, 0x10, 0x13, 0x0f, 0x10, 0x10, 0x10, 0xff, 0xc9, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01,
    0x01, 0x01, 0x11, 0x00, 0xff, 0xcc, 0x00, 0x06, 0x00, 0x10, 0x10, 0x05, 0xff, 0xda, 0x00, 0x08,
    0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0xd2, 0xcf, 0x20, 0xff, 0xd9,
];

/// A one-sheet XLSX workbook (A1: "APIStend sample"), written with Python's `zipfile` and
/// opened with openpyxl to check it. Yandex Market sends its XLSX acts as
/// `application/vnd.ms-excel`, so that type gets it too.
const XLSX: &[u8] = include_bytes!("../data/sample.xlsx");

/// The body of an answer of `media` type (not JSON); `example` is the description's example,
/// used as the text of a text type.
pub fn file(media: &str, example: &Value) -> Vec<u8> {
    let essence = media.split(';').next().unwrap_or("").trim();
    match essence {
        "application/pdf" => PDF.to_vec(),
        "application/zip" | "application/x-zip-compressed" => ZIP.to_vec(),
        "image/png" => PNG.to_vec(),
        "image/jpeg" | "image/jpg" => JPEG.to_vec(),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        | "application/vnd.ms-excel" => XLSX.to_vec(),
        t if t.starts_with("text/")
            || t.ends_with("csv")
            || t.ends_with("xml")
            || t.ends_with("+json") =>
        {
            match example {
                Value::String(s) => s.clone().into_bytes(),
                Value::Null => Vec::new(),
                other => other.to_string().into_bytes(),
            }
        }
        // A type with no sample of its own: bytes that say what they stand for.
        _ => format!("APIStend sample of {essence}\n").into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_carry_their_types_magic_numbers() {
        assert!(file("application/pdf", &Value::Null).starts_with(b"%PDF-"));
        assert!(file("application/zip", &Value::Null).starts_with(b"PK\x05\x06"));
        assert!(file("image/png", &Value::Null).starts_with(b"\x89PNG\r\n\x1a\n"));
        assert!(file("image/jpeg", &Value::Null).starts_with(&[0xff, 0xd8]));
        // An OOXML package is a ZIP with a local file header first.
        assert!(file("application/vnd.ms-excel", &Value::Null).starts_with(b"PK\x03\x04"));
        assert_eq!(
            file(
                "application/problem+json",
                &serde_json::json!({"status": 400})
            ),
            br#"{"status":400}"#
        );
        assert_eq!(
            file("text/plain; charset=utf-8", &Value::from("log line")),
            b"log line"
        );
    }
}
