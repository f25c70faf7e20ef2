# bpf_object(NAME SOURCES a.bpf.c... HEADERS h...)
#
# Compiles each source with clang for the BPF target against a vmlinux.h generated at build
# time from the running kernel's BTF, links the objects into one
# (bpftool gen object) and generates a libbpf skeleton from it. Defines an
# INTERFACE library NAME_skel that carries the skeleton's include directory, so a consumer only
# links it: target_link_libraries(collector PRIVATE NAME_skel).

find_program(BPF_CLANG NAMES clang-14 clang REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

set(MW_VMLINUX_BTF "/sys/kernel/btf/vmlinux" CACHE FILEPATH "BTF blob vmlinux.h is generated from")
set(MW_BPF_GEN_DIR "${CMAKE_BINARY_DIR}/bpf")
file(MAKE_DIRECTORY "${MW_BPF_GEN_DIR}")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
	set(MW_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
	set(MW_BPF_ARCH arm64)
else()
	message(FATAL_ERROR "unsupported architecture for BPF: ${CMAKE_SYSTEM_PROCESSOR}")
endif()


function(bpf_object name)
	cmake_parse_arguments(BO "" "" "SOURCES;HEADERS" ${ARGN})
	set(linked "${MW_BPF_GEN_DIR}/${name}.bpf.o")
	set(skel "${MW_BPF_GEN_DIR}/${name}.skel.h")
	set(deps "${MW_BPF_GEN_DIR}/vmlinux.h")
	foreach(h IN LISTS BO_HEADERS)
		list(APPEND deps "${CMAKE_CURRENT_SOURCE_DIR}/${h}")
	endforeach()
	# vmlinux.h is generated in the directory that builds BPF objects (a custom command's
	# output is only known to targets of its own directory).
	if(NOT TARGET vmlinux_h)
		add_custom_command(
			OUTPUT "${MW_BPF_GEN_DIR}/vmlinux.h"
			COMMAND ${BPFTOOL} btf dump file ${MW_VMLINUX_BTF} format c
				> "${MW_BPF_GEN_DIR}/vmlinux.h.tmp"
			COMMAND ${CMAKE_COMMAND} -E rename "${MW_BPF_GEN_DIR}/vmlinux.h.tmp"
				"${MW_BPF_GEN_DIR}/vmlinux.h"
			COMMENT "generating vmlinux.h from ${MW_VMLINUX_BTF}"
			VERBATIM)
		add_custom_target(vmlinux_h DEPENDS "${MW_BPF_GEN_DIR}/vmlinux.h")
	endif()
	set(objs "")
	foreach(src IN LISTS BO_SOURCES)
		get_filename_component(stem "${src}" NAME_WE)
		set(obj "${MW_BPF_GEN_DIR}/${name}.${stem}.o")
		add_custom_command(
			OUTPUT "${obj}"
			COMMAND ${BPF_CLANG} -g -O2 -target bpf -mcpu=v3
				-D__TARGET_ARCH_${MW_BPF_ARCH} -Wall -Werror
				-I "${MW_BPF_GEN_DIR}" -I "${CMAKE_CURRENT_SOURCE_DIR}"
				-c "${CMAKE_CURRENT_SOURCE_DIR}/${src}" -o "${obj}"
			DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${src}" ${deps}
			COMMENT "compiling BPF ${src}"
			VERBATIM)
		list(APPEND objs "${obj}")
	endforeach()
	add_custom_command(
		OUTPUT "${linked}"
		COMMAND ${BPFTOOL} gen object "${linked}" ${objs}
		DEPENDS ${objs}
		COMMENT "linking BPF object ${name}"
		VERBATIM)
	add_custom_command(
		OUTPUT "${skel}"
		COMMAND ${BPFTOOL} gen skeleton "${linked}" name ${name} > "${skel}.tmp"
		COMMAND ${CMAKE_COMMAND} -E rename "${skel}.tmp" "${skel}"
		DEPENDS "${linked}"
		COMMENT "generating skeleton ${name}.skel.h"
		VERBATIM)
	add_custom_target(${name}_skel_gen DEPENDS "${skel}")
	add_library(${name}_skel INTERFACE)
	add_dependencies(${name}_skel ${name}_skel_gen)
	target_include_directories(${name}_skel INTERFACE "${MW_BPF_GEN_DIR}")
endfunction()
