//! Test support shared by the model-client tests: a scripted provider on 127.0.0.1 and
//! the expected shapes of the two request dialects.
#![allow(dead_code)]

pub mod cgroup_host;
pub mod host_tool;
pub mod mcp_fixture;
pub mod mock_provider;
pub mod project;
pub mod request_shape;
pub mod sarif_schema;
pub mod tool_workspace;
