use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A vendored protoc keeps a fresh machine's build free of system packages.
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    std::env::set_var("PROTOC", protoc);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let protos = [
        "capstan/v1/resources.proto",
        "capstan/v1/discovery.proto",
        "capstan/v1/admission.proto",
    ];
    // The service an admission webhook serves when Capstan calls it over
    // gRPC: a package of its own, outside the descriptors Capstan's
    // reflection lists. Compiled first: compiling it regenerates the
    // capstan.v1 file it imports, which the full compile below replaces.
    let webhook = "capstan/webhook/v1/webhook.proto";
    tonic_prost_build::configure()
        .extern_path(".google.protobuf.Struct", "crate::json::JsonStruct")
        .extern_path(".capstan.v1", "crate::v1")
        .compile_protos(&[webhook], &["."])?;
    // Objects travel as google.protobuf.Struct, held as serde_json (src/json.rs).
    tonic_prost_build::configure()
        .extern_path(".google.protobuf.Struct", "crate::json::JsonStruct")
        .extern_path(".google.protobuf.Value", "crate::json::JsonValue")
        .extern_path(".google.protobuf.ListValue", "crate::json::JsonList")
        .file_descriptor_set_path(out_dir.join("capstan_descriptor.bin"))
        .compile_protos(&protos, &["."])?;
    for proto in protos.into_iter().chain([webhook]) {
        println!("cargo:rerun-if-changed={proto}");
    }
    Ok(())
}
