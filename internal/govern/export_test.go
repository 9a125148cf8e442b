package govern

// RuleAllows exposes ruleAllows to the tests of what a rule covers.
var RuleAllows = ruleAllows
