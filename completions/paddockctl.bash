# bash completion for paddockctl(1)                       -*- shell-script -*-
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Commands are listed here (tests/test-completions.sh checks them against
# `paddockctl --help`); each command's options are read from its own --help
# as Tab is pressed, so they cannot drift; session ids come from the daemon
# through `paddockctl __complete sessions`, which never starts it; agent
# names from `paddockctl __complete agents`, which reads the preset folders.

_paddockctl_commands="create list status logs send stop destroy attach exec review apply drop checkpoint net ports info agents"
# Commands whose first argument is a session id.
_paddockctl_session_commands="status logs send stop destroy attach exec review apply drop checkpoint net"

# The long options of `PROGRAM [WORD…] --help`; with "=", only those that
# take a value ("--workspace=DIR" in the help).
_paddockctl_options()
{
    local valued=$1
    shift
    "$@" --help 2>/dev/null |
        sed -n 's/^ *\(-[[:alnum:]], \)\{0,1\}\(--[[:alnum:]][[:alnum:]-]*\)\(=\{0,1\}\).*/\2\3/p' |
        if [ "$valued" = "=" ]; then sed -n 's/=$//p'; else sed 's/=$//'; fi
}

# The words before --help that give a command's help: `ports lease`, not
# just `ports`, for the commands of the ports group.
_paddockctl_help_words()
{
    echo "$1"
    { [ "$1" = ports ] || [ "$1" = agents ]; } && [ -n "${2:-}" ] && echo "$2"
    return 0
}

_paddockctl()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog=${COMP_WORDS[0]} command="" word valued="" i
    local -a args=()

    COMPREPLY=()

    # The command word and the arguments after it, skipping options and
    # the values of those that take one.
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [ "$word" = "--" ]; then
            # What follows is the user's own command line.
            if ((COMP_CWORD == i + 1)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return 0
        fi
        case $word in
            --*=*) ;;
            -*)
                [ -z "$valued" ] && valued=" $(_paddockctl_options = "$prog" $(_paddockctl_help_words "$command" "${args[@]}") | tr '\n' ' ') "
                [[ $valued == *" $word "* ]] && ((i++))
                ;;
            *)
                if [ -z "$command" ]; then
                    command=$word
                else
                    args+=("$word")
                fi
                valued=""
                ;;
        esac
    done

    # The value of an option: folders for those that name one, files for
    # --path, nothing to offer otherwise (a mode, a name, a number).
    if [[ $prev == --* ]] && [[ " $(_paddockctl_options = "$prog" $(_paddockctl_help_words "$command" "${args[@]}") | tr '\n' ' ') " == *" $prev "* ]]; then
        case $prev in
            --workspace|--allow-write|--expose) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
            --path|--force-path) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
            --agent) mapfile -t COMPREPLY < <(compgen -W "$("$prog" __complete agents 2>/dev/null)" -- "$cur") ;;
            --port-handover) mapfile -t COMPREPLY < <(compgen -W "release listen-fds" -- "$cur") ;;
        esac
        return 0
    fi

    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_paddockctl_options "" "$prog" $(_paddockctl_help_words "$command" "${args[@]}"))" -- "$cur")
        return 0
    fi

    if [ -z "$command" ]; then
        mapfile -t COMPREPLY < <(compgen -W "$_paddockctl_commands" -- "$cur")
        return 0
    fi

    local nargs=${#args[@]}
    case $command in
        ports)
            ((nargs == 0)) && mapfile -t COMPREPLY < <(compgen -W "lease release list" -- "$cur")
            return 0
            ;;
        agents)
            ((nargs == 0)) && mapfile -t COMPREPLY < <(compgen -W "list reset import-login" -- "$cur")
            ((nargs == 1)) && [ "${args[0]}" != list ] &&
                mapfile -t COMPREPLY < <(compgen -W "$("$prog" __complete agents 2>/dev/null)" -- "$cur")
            return 0
            ;;
        checkpoint)
            ((nargs == 1)) && { mapfile -t COMPREPLY < <(compgen -W "create list restore" -- "$cur"); return 0; }
            ;;
        net)
            ((nargs == 1)) && { mapfile -t COMPREPLY < <(compgen -W "records set" -- "$cur"); return 0; }
            ;;
        review|apply|drop)
            # The paths after the id are the workspace's.
            ((nargs >= 1)) && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0; }
            ;;
    esac

    if ((nargs == 0)) && [[ " $_paddockctl_session_commands " == *" $command "* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$("$prog" __complete sessions 2>/dev/null | cut -f1)" -- "$cur")
    fi
    return 0
}

complete -F _paddockctl paddockctl
