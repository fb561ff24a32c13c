package claimsync

// DirIno is dirIno, for the tests of the identity's binding.
var DirIno = dirIno
