//! Compiles `cubefleet/v1/*.proto` with protox (pure Rust: no system `protoc` needed) and
//! generates the messages, and with the feature `grpc` the tonic client and server code; keeps the encoded descriptor set for reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["cubefleet/v1/cubefleet.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["."])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("cubefleet_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    let grpc = std::env::var_os("CARGO_FEATURE_GRPC").is_some();
    tonic_prost_build::configure()
        .build_client(grpc)
        .build_server(grpc)
        .compile_fds(fds)?;
    Ok(())
}
