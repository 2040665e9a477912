# Installation layout and the Debian package (cpack -G DEB in a Release build directory):
#   /usr/bin/ratelimitd (and /usr/bin/ratelimit, a link: ERL mode), /etc/ratelimitd/config.yaml (a conffile), /etc/default/ratelimitd,
#   /lib/systemd/system/ratelimitd.service. See docs/deployment.md.
include(GNUInstallDirs)

install(TARGETS ratelimitd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# `ratelimit`, a link to the binary: started under envoyproxy/ratelimit's name, ratelimitd reads
# its environment (ERL mode, docs/envoy.md). /bin is /usr/bin on Debian 12.
file(CREATE_LINK ratelimitd ${PROJECT_BINARY_DIR}/ratelimit SYMBOLIC)
install(FILES ${PROJECT_BINARY_DIR}/ratelimit DESTINATION ${CMAKE_INSTALL_BINDIR})
# Absolute destinations: a packaged service's config and unit live where Debian expects them,
# whatever the prefix.
install(FILES config/example.yaml DESTINATION /etc/ratelimitd RENAME config.yaml)
install(FILES deploy/debian/default DESTINATION /etc/default RENAME ratelimitd)
install(FILES deploy/systemd/ratelimitd.service DESTINATION /lib/systemd/system)
install(FILES LICENSE docs/deployment.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME ratelimitd)
set(CPACK_PACKAGE_VENDOR "ratelimitd")
set(CPACK_PACKAGE_CONTACT "ratelimitd maintainers <ratelimitd@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Rate-limiting HTTP sidecar with a Redis or embedded store")
set(CPACK_PACKAGE_INSTALL_DIRECTORY ratelimitd)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)           # ratelimitd_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)            # Depends: from the binary's shared libraries
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server")
# Files under /etc are conffiles: an upgrade keeps the administrator's edits.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)                          # the binary without debug symbols
include(CPack)
