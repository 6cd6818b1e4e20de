package notify

// changeNotification is a Change Notification payload shaped as in Example 1
// of the ResourceSync Change Notification 1.0 specification (that
// specification is not in the project's shared specs; this follows its structure: a
// <urlset> with rs:md capability="change-notification", an "up" link to the
// Capability List, and one <url> per change).
const changeNotification = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up"
         href="http://example.com/dataset1/capabilitylist.xml"/>
  <rs:md capability="change-notification"/>
  <url>
      <loc>http://example.com/res1.html</loc>
      <rs:md change="created"
             datetime="2013-01-02T13:00:00Z"
             hash="md5:1c1b0e264fa9b7e1e9aa6f9db8d6362b"
             length="4339"
             type="text/html"/>
  </url>
  <url>
      <loc>http://example.com/res2.pdf</loc>
      <rs:md change="updated"
             datetime="2013-01-02T14:00:00Z"
             hash="md5:1e0d5cb8ef6ba40c99b14c0237be735e"
             length="8876"
             type="application/pdf"/>
  </url>
  <url>
      <loc>http://example.com/res3.tiff</loc>
      <rs:md change="deleted"
             datetime="2013-01-02T15:00:00Z"/>
  </url>
</urlset>`

// frameworkNotification is Example 2 of the ResourceSync Framework
// Notification 1.0 specification, verbatim
// (the project's shared specs/resourcesync-framework-notification-1.0.txt).
const frameworkNotification = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="framework-notification"/>
   <url>
      <loc>http://example.com/dataset1/resourcelist.xml</loc>
      <rs:md change="created"
             capability="resourcelist"/>
      <rs:ln rel="index"
             href="http://example.com/dataset1/resourcelist-index.xml"/>
   </url>
   <url>
      <loc>http://example.com/dataset1/resourcedump.xml</loc>
      <rs:md change="created"
             capability="resourcedump"/>
   </url>
   <url>
      <loc>http://example.com/dataset1/changelist.xml</loc>
      <rs:md change="updated"
             capability="changelist"/>
   </url>
</urlset>`

// Topics as in the specification's examples.
const (
	changeTopic    = "http://example.com/dataset1/change/"
	frameworkTopic = "http://example.com/dataset1/framework/"
)
