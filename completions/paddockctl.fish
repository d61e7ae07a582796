# fish completion for paddockctl(1)
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Commands are listed here (tests/test-completions.sh checks them against
# `paddockctl --help`); each command's options are read from its own --help
# as Tab is pressed; session ids come from the daemon through
# `paddockctl __complete sessions`, which never starts it ("ID<tab>NAME",
# what fish shows as a completion and its description).

set -l paddockctl_commands create list status logs send stop destroy attach exec review apply drop checkpoint net ports info agents

# The command word and the arguments after it, options left out.
function __paddockctl_words
    set -l tokens (commandline -opc)
    for token in $tokens[2..-1]
        if test "$token" = --
            break
        end
        string match -q -- '-*' $token; or echo $token
    end
end

# True when the word being completed is argument number $argv[2] (0 = the
# first) of command $argv[1].
function __paddockctl_arg_is
    set -l words (__paddockctl_words)
    test (count $words) -ge 1; or return 1
    contains -- $words[1] (string split ' ' $argv[1]); or return 1
    test (math (count $words) - 1) -eq $argv[2]
end

function __paddockctl_after_dashdash
    contains -- -- (commandline -opc)
end

function __paddockctl_options
    set -l words (__paddockctl_words)
    set -l help $words[1]
    if contains -- "$words[1]" ports agents; and set -q words[2]
        set help $help $words[2]
    end
    set -l prog (commandline -opc)[1]
    $prog $help --help 2>/dev/null | string replace -rf '^ *(-\w, )?(--\w[\w-]*).*' '$2'
end

complete -c paddockctl -f
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a create -d 'Start an agent session in a workspace'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a list -d 'List the sessions'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a status -d 'Describe one session'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a logs -d "Print a session's terminal output"
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a send -d "Type text into a session's terminal"
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a stop -d 'Stop every process of a session'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a destroy -d 'Stop a session and delete it'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a attach -d "Open a session's terminal"
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a exec -d 'Run a command in a session and wait for it'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a review -d "List a session's staged changes, or show their diffs"
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a apply -d 'Apply staged changes to the workspace, all or some'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a drop -d 'Discard staged changes, all or some'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a checkpoint -d "Save, list or restore copies of a session's stage"
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a net -d "List a session's network requests, or change its policy"
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a ports -d 'Lease, release and list local TCP ports'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a info -d 'Describe the running daemon'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and not __fish_seen_subcommand_from $paddockctl_commands" -a agents -d "List the agent presets, reset an agent's home, import its login"

# Options, from the command's own --help.
complete -c paddockctl -n "not __paddockctl_after_dashdash; and string match -q -- '-*' (commandline -ct)" -a '(__paddockctl_options)'

# Session ids, then the words that follow some of them.
complete -c paddockctl -n "not __paddockctl_after_dashdash; and __paddockctl_arg_is 'status logs send stop destroy attach exec review apply drop checkpoint net' 0" -a '(paddockctl __complete sessions 2>/dev/null)'
complete -c paddockctl -n "__paddockctl_arg_is ports 0" -a 'lease release list'
complete -c paddockctl -n "__paddockctl_arg_is checkpoint 1" -a 'create list restore'
complete -c paddockctl -n "__paddockctl_arg_is agents 0" -a 'list reset import-login'
complete -c paddockctl -n "__paddockctl_arg_is agents 1; and __fish_seen_subcommand_from reset import-login" -a '(paddockctl __complete agents 2>/dev/null)'
complete -c paddockctl -l agent -x -a '(paddockctl __complete agents 2>/dev/null)'
complete -c paddockctl -l port-handover -x -a 'release listen-fds'
complete -c paddockctl -n "__paddockctl_arg_is net 1" -a 'records set'
complete -c paddockctl -n "not __paddockctl_after_dashdash; and __fish_seen_subcommand_from review apply drop; and not __paddockctl_arg_is 'review apply drop' 0" -F
complete -c paddockctl -l workspace -x -a '(__fish_complete_directories)'
complete -c paddockctl -l allow-write -x -a '(__fish_complete_directories)'
complete -c paddockctl -l expose -x -a '(__fish_complete_directories)'

# After "--": the user's own command, then its files.
complete -c paddockctl -n __paddockctl_after_dashdash -F
