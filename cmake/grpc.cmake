# The gRPC transport (Envoy's rate limit service and grpc.health.v1): protoc and
# grpc_cpp_plugin generate the C++ of proto/ at build time into rl_grpc_proto, compiled
# WITHOUT the project's warning flags (generated code is not ours to keep -Werror clean);
# rl_grpc (src/grpc/) is our code over it, with the warnings. Debian 12: libgrpc++-dev 1.51,
# libprotobuf-dev 3.21, protobuf-compiler, protobuf-compiler-grpc.
find_package(Protobuf 3.21 REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(RATELIMITD_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

set(grpc_proto_dir ${PROJECT_SOURCE_DIR}/proto)
set(grpc_gen_dir ${PROJECT_BINARY_DIR}/generated/proto)
set(grpc_protos
  envoy/config/core/v3/base.proto
  envoy/extensions/common/ratelimit/v3/ratelimit.proto
  envoy/service/ratelimit/v3/rls.proto
  grpc/health/v1/health.proto
  google/rpc/status.proto
  envoy/service/discovery/v3/discovery.proto
  envoy/service/discovery/v3/ads.proto
  ratelimit/config/ratelimit/v3/rls_conf.proto)
# Messages only for the imported files; services (and their .grpc.pb.*) for the others.
set(grpc_service_protos envoy/service/ratelimit/v3/rls.proto grpc/health/v1/health.proto
  envoy/service/discovery/v3/ads.proto)

set(grpc_gen_sources)
foreach(proto ${grpc_protos})
  string(REGEX REPLACE "\\.proto$" "" stem ${proto})
  set(outputs ${grpc_gen_dir}/${stem}.pb.cc ${grpc_gen_dir}/${stem}.pb.h)
  set(plugin_args)
  if(proto IN_LIST grpc_service_protos)
    list(APPEND outputs ${grpc_gen_dir}/${stem}.grpc.pb.cc ${grpc_gen_dir}/${stem}.grpc.pb.h)
    set(plugin_args --grpc_out=${grpc_gen_dir} --plugin=protoc-gen-grpc=${RATELIMITD_GRPC_CPP_PLUGIN})
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${grpc_gen_dir}
    COMMAND protobuf::protoc -I ${grpc_proto_dir} --cpp_out=${grpc_gen_dir} ${plugin_args}
            ${grpc_proto_dir}/${proto}
    DEPENDS ${grpc_proto_dir}/${proto} protobuf::protoc
    COMMENT "protoc ${proto}")
  foreach(out ${outputs})
    if(out MATCHES "\\.cc$")
      list(APPEND grpc_gen_sources ${out})
    endif()
  endforeach()
endforeach()

add_library(rl_grpc_proto STATIC ${grpc_gen_sources})
target_include_directories(rl_grpc_proto SYSTEM PUBLIC ${grpc_gen_dir})
target_link_libraries(rl_grpc_proto PUBLIC gRPC::grpc++ protobuf::libprotobuf)
# protoc gives every generated file the same file-local names (schemas, file_default_instances):
# never one translation unit of several, even in a unity build.
set_target_properties(rl_grpc_proto PROPERTIES UNITY_BUILD OFF)
# The sanitizer and fuzz builds instrument it like the rest (add_compile_options above).

rl_module(rl_grpc grpc)
# OpenSSL::Crypto: the start-time check of the grpc_tls files (tls_options.cpp); the TLS
# itself is gRPC's.
target_link_libraries(rl_grpc PUBLIC rl_road rl_headers rl_stats rl_grpc_proto PRIVATE spdlog::spdlog fmt::fmt OpenSSL::Crypto)

# The xDS config source (src/xds/): an ADS client of the control plane, and the conversion of
# its RateLimitConfig resources into the registry's Envoy domains.
rl_module(rl_xds xds)
target_link_libraries(rl_xds PUBLIC rl_policy rl_grpc_proto PRIVATE spdlog::spdlog fmt::fmt)
