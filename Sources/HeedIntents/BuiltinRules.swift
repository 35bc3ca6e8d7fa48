import HeedCore
/// The JSGF rules that define the spoken forms of the scalar parameter types.
///
/// The converters in `SpokenNumbers`, `SpokenDuration` and `SpokenBoolean` read exactly these
/// forms; the tests check that every canonical spoken value is accepted by these rules.
/// Rule names start with `heed_`, a prefix user rule files may not use.
enum BuiltinRules {
    static let path = "<heed built-in rules>"

    static let text = """
        #JSGF V1.0;
        grammar heed_builtin;
        <heed_digit> = one | two | three | four | five | six | seven | eight | nine;
        <heed_teen> = ten | eleven | twelve | thirteen | fourteen | fifteen | sixteen | seventeen | eighteen | nineteen;
        <heed_tens> = twenty | thirty | forty | fifty | sixty | seventy | eighty | ninety;
        <heed_below_hundred> = <heed_digit> | <heed_teen> | <heed_tens> [<heed_digit>];
        <heed_below_thousand> = <heed_below_hundred> | (a | <heed_digit>) hundred [[and] <heed_below_hundred>];
        <heed_integer> = zero | <heed_below_thousand> [thousand [[and] <heed_below_thousand>]] | a thousand [[and] <heed_below_thousand>];
        <heed_decimal_digit> = zero | oh | <heed_digit>;
        <heed_number> = <heed_integer> [point <heed_decimal_digit> [<heed_decimal_digit> [<heed_decimal_digit> [<heed_decimal_digit>]]]];
        <heed_boolean> = yes | yeah | yep | sure | okay | true | on | no | nope | false | off;
        <heed_duration_count> = <heed_below_hundred> | (a | one) hundred;
        <heed_duration_hour_count> = <heed_digit> | <heed_teen> | twenty [one | two | three | four];
        <heed_below_sixty> = <heed_digit> | <heed_teen> | (twenty | thirty | forty | fifty) [<heed_digit>];
        <heed_duration_hours> = (<heed_duration_hour_count> | an) (hour | hours);
        <heed_duration_half_hours> = (<heed_duration_hour_count> | an) (hour | hours) and a half | <heed_duration_hour_count> and a half (hour | hours) | half an hour;
        <heed_duration_minutes> = (<heed_duration_count> | a) (minute | minutes);
        <heed_duration_half_minutes> = (<heed_duration_count> | a) (minute | minutes) and a half | <heed_below_hundred> and a half (minute | minutes) | half a minute;
        <heed_duration_seconds> = <heed_duration_count> (second | seconds);
        <heed_duration_later_minutes> = <heed_below_sixty> (minute | minutes);
        <heed_duration_later_seconds> = <heed_below_sixty> (second | seconds);
        <heed_duration> = <heed_duration_hours> [[and] <heed_duration_later_minutes>] [[and] <heed_duration_later_seconds>] | <heed_duration_half_hours> | <heed_duration_minutes> [[and] <heed_duration_later_seconds>] | <heed_duration_half_minutes> | <heed_duration_seconds> | <heed_duration_count> more (hour | hours | minute | minutes | second | seconds);
        <heed_ordinal_unit> = first | second | third | fourth | fifth | sixth | seventh | eighth | ninth;
        <heed_ordinal_word> = <heed_ordinal_unit> | tenth | eleventh | twelfth | thirteenth | fourteenth | fifteenth | sixteenth | seventeenth | eighteenth | nineteenth | twentieth | thirtieth | fortieth | fiftieth | sixtieth | seventieth | eightieth | ninetieth | <heed_tens> <heed_ordinal_unit> | last;
        <heed_ordinal> = [the] <heed_ordinal_word> [one];
        """

    /// The parsed rules. The text above is a constant checked by the tests, so a parse error is a programmer error.
    static let rules: [RuleDefinition] = {
        do {
            return try RuleFileParser.parse(SourceText(path: path, text: text)).rules
        } catch {
            preconditionFailure("built-in rules do not parse: \(error)")
        }
    }()
}
