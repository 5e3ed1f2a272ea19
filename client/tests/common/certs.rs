//! Certificates for the TLS tests, made with the `openssl` command: a CA, a
//! server certificate for 127.0.0.1 (and `shop.test`) that it signed, a
//! client certificate it signed (mutual TLS), and a second CA that signed
//! nothing (the wrong CA). P-256 keys, unencrypted PEM, valid two days.

use super::containers::run;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Makes the certificates in `dir/certs` and returns that folder:
/// `ca.pem`, `other-ca.pem`, `server.pem`/`server.key`,
/// `client.pem`/`client.key` (the keys readable by a container's user).
#[allow(dead_code)]
pub fn certificates(dir: &Path) -> PathBuf {
    let dir = dir.join("certs");
    std::fs::create_dir_all(&dir).unwrap();
    let openssl = |args: &[&str]| {
        run(
            Command::new("openssl").args(args).current_dir(&dir),
            &format!("openssl {}", args[0]),
        );
    };
    // `openssl req` making a new P-256 key, unencrypted, then `rest`.
    let new_key = |rest: &[&str]| {
        let head = [
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ];
        openssl(&[&head[..], rest].concat());
    };
    for ca in ["ca", "other-ca"] {
        let (key, pem, subject) = (
            format!("{ca}.key"),
            format!("{ca}.pem"),
            format!("/CN=rpclab test {ca}"),
        );
        new_key(&[
            "-x509", "-keyout", &key, "-out", &pem, "-days", "2", "-subj", &subject,
        ]);
    }
    for (leaf, extensions) in [
        (
            "server",
            "subjectAltName=IP:127.0.0.1,DNS:shop.test\nbasicConstraints=CA:FALSE\n",
        ),
        (
            "client",
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        ),
    ] {
        let (key, csr, pem, ext) = (
            format!("{leaf}.key"),
            format!("{leaf}.csr"),
            format!("{leaf}.pem"),
            format!("{leaf}.ext"),
        );
        let subject = format!("/CN=rpclab test {leaf}");
        new_key(&["-keyout", &key, "-out", &csr, "-subj", &subject]);
        std::fs::write(dir.join(&ext), extensions).unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &pem,
            "-days",
            "2",
            "-extfile",
            &ext,
        ]);
        // The container's user reads them.
        for file in [&pem, &key] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.join(file), std::fs::Permissions::from_mode(0o644))
                .unwrap();
        }
    }
    dir
}
