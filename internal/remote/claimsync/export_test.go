package claimsync

// DirIno is dirIno, for the tests of the identity's binding.
var DirIno = dirIno

// ReleaseEnded is releaseEnded, for a call that found no workflow active before one started.
var ReleaseEnded = releaseEnded
